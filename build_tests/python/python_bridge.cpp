// The Python bridge (libbackendbench_python.so; the interface is backendbench/python_bridge.h):
// an interpreter embedded in the test and bench executables, started with the Python whose torch
// the build uses, that loads .py kernels (the original's generated_kernels/<op>/*.py) and the
// operators of Python op libraries (backendbench.op_libraries), and calls them boxed, with the
// argument layout PyTorch gives a Python kernel registered with torch.library.
//
// The GIL: the interpreter starts on the first Python manifest line and then releases the GIL;
// each call takes it for the call alone, so nothing else waits on it and a kernel's own threads
// (Triton's compiler) run. A module is imported on first use (PythonKernel::load), outside any
// observed call, so that a process imports only the kernels it runs.
#include <Python.h>  // first, as Python asks

#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/utils/tensor_memoryformats.h>

#include <dlfcn.h>

#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backendbench/python_bridge.h"
#include "language/naming.h"
#include "language/op_library_listing.h"

namespace py = pybind11;

namespace backendbench {
namespace {

// The Python exception being handled, with its traceback, as one text.
std::string python_error_text(py::error_already_set& error) {
  try {
    const py::list lines = py::module_::import("traceback").attr("format_exception")(error.type(), error.value(), error.trace());
    std::string text;
    for (const py::handle line : lines) text += line.cast<std::string>();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  } catch (const std::exception&) {
    return error.what();
  }
}

void start_interpreter() {
  static std::once_flag started;
  std::call_once(started, [] {
    if (Py_IsInitialized()) return;  // a Python process already (a kernel library loaded by torch)
    // This library was loaded with RTLD_LOCAL, and libpython with it: extension modules (ctypes,
    // torch._C) look Python's symbols up globally, so make libpython's global first.
    Dl_info python_library;
    if (dladdr(reinterpret_cast<void*>(&Py_InitializeFromConfig), &python_library) == 0 ||
        dlopen(python_library.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == nullptr) {
      throw std::runtime_error(std::string("cannot make libpython's symbols global: ") + dlerror());
    }
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;  // the test executables' crash handlers stay theirs
    config.parse_argv = 0;
    // As if this were the build's python3: a virtual environment's site-packages (and its torch)
    // are found from the executable's path.
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, BACKENDBENCH_PYTHON_EXECUTABLE);
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
      throw std::runtime_error(std::string("cannot start Python (") + BACKENDBENCH_PYTHON_EXECUTABLE +
                               "): " + (status.err_msg != nullptr ? status.err_msg : "unknown error"));
    }
    try {
      py::module_::import("torch");  // initialises the types the conversions below use
      // The backendbench package of this source tree, unless one is installed.
      if (!py::module_::import("importlib.util").attr("find_spec")("backendbench").cast<bool>()) {
        py::module_::import("sys").attr("path").attr("append")(BACKENDBENCH_PYTHON_PACKAGE_DIR);
      }
    } catch (py::error_already_set& error) {
      const std::string text = python_error_text(error);
      PyEval_SaveThread();
      throw std::runtime_error("cannot import torch in the embedded Python: " + text);
    }
    PyEval_SaveThread();  // from here on, each call holds the GIL for itself alone
  });
}

// An argument as PyTorch hands it to a Python kernel: dtypes, layouts and memory formats as
// torch's objects (the stack holds them as integers), the rest as toPyObject converts them.
py::object to_python(const c10::IValue& value, const c10::Argument& argument) {
  if (value.isNone()) return py::none();
  c10::TypePtr type = argument.real_type();
  if (const auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  switch (type->kind()) {
    case c10::TypeKind::ScalarTypeType:
      return py::reinterpret_borrow<py::object>(
          reinterpret_cast<PyObject*>(torch::getTHPDtype(static_cast<c10::ScalarType>(value.toInt()))));
    case c10::TypeKind::LayoutType:
      return py::reinterpret_borrow<py::object>(
          reinterpret_cast<PyObject*>(torch::getTHPLayout(static_cast<c10::Layout>(value.toInt()))));
    case c10::TypeKind::MemoryFormatType:
      return py::reinterpret_borrow<py::object>(
          torch::utils::getTHPMemoryFormat(static_cast<c10::MemoryFormat>(value.toInt())));
    default:
      return torch::jit::toPyObject(value);
  }
}

bool is_default(const c10::IValue& value, const c10::Argument& argument) {
  if (!argument.default_value() || value.isTensor()) return false;
  try {
    return value == *argument.default_value();
  } catch (const std::exception&) {
    return false;
  }
}

// torch.library's layout: positional arguments up to the last one that differs from its default,
// keyword-only arguments by name where they differ from theirs. Pops the arguments.
std::pair<py::tuple, py::dict> python_arguments(const c10::FunctionSchema& schema, torch::jit::Stack& stack) {
  const std::vector<c10::Argument>& arguments = schema.arguments();
  const size_t count = arguments.size();
  const auto values = torch::jit::last(stack, count);
  size_t positional = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!arguments[i].kwarg_only() && !is_default(values[i], arguments[i])) positional = i + 1;
  }
  py::tuple args(positional);
  py::dict kwargs;
  for (size_t i = 0; i < count; ++i) {
    if (i < positional) {
      args[i] = to_python(values[i], arguments[i]);
    } else if (arguments[i].kwarg_only() && !is_default(values[i], arguments[i])) {
      kwargs[py::str(arguments[i].name())] = to_python(values[i], arguments[i]);
    }
  }
  torch::jit::drop(stack, count);
  return {std::move(args), std::move(kwargs)};
}

std::string python_type_name(const py::handle& object) {
  return py::str(py::type::handle_of(object).attr("__qualname__")).cast<std::string>();
}

// Refuses a torch.Tensor subclass among a kernel's results (nn.Parameter, data only, is a plain
// tensor): a subclass, a __torch_dispatch__ wrapper say, can defer its work until its values are
// read, after the call is timed, or be read differently than a plain tensor.
void refuse_tensor_subclasses(const py::handle& value) {
  if (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value)) {
    for (const py::handle item : py::reinterpret_borrow<py::sequence>(value)) refuse_tensor_subclasses(item);
    return;
  }
  const py::module_ torch = py::module_::import("torch");
  const py::object tensor = torch.attr("Tensor");
  if (!py::isinstance(value, tensor)) return;
  const py::handle type = reinterpret_cast<PyObject*>(Py_TYPE(value.ptr()));
  if (type.is(tensor) || type.is(torch.attr("nn").attr("Parameter"))) return;
  throw std::runtime_error("it returned a " + python_type_name(value) +
                           ", a subclass of torch.Tensor; expected a plain torch.Tensor (a subclass can defer its work "
                           "until its values are read, after the call is timed)");
}

// The kernel's result onto the stack, typed as the schema's returns.
void push_results(const c10::FunctionSchema& schema, const py::object& result, torch::jit::Stack& stack) {
  const std::vector<c10::Argument>& returns = schema.returns();
  if (returns.empty()) return;
  refuse_tensor_subclasses(result);
  auto convert = [&](const py::handle& value, const c10::Argument& expected) {
    try {
      stack.push_back(torch::jit::toIValue(value, expected.real_type()));
    } catch (const std::exception&) {
      throw std::runtime_error("it returned a " + python_type_name(value) + " where " + schema.operator_name().name +
                               " returns " + expected.real_type()->str());
    }
  };
  if (returns.size() == 1) return convert(result, returns[0]);
  if (!py::isinstance<py::tuple>(result) && !py::isinstance<py::list>(result)) {
    throw std::runtime_error("it returned a " + python_type_name(result) + "; expected a tuple of " +
                             std::to_string(returns.size()) + " results (" + c10::toString(schema) + ")");
  }
  const py::sequence values = py::reinterpret_borrow<py::sequence>(result);
  if (values.size() != returns.size()) {
    throw std::runtime_error("it returned " + std::to_string(values.size()) + " results; expected " +
                             std::to_string(returns.size()) + " (" + c10::toString(schema) + ")");
  }
  for (size_t i = 0; i < returns.size(); ++i) convert(values[i], returns[i]);
}

// One Python callable, imported on first use by `find` (a Python expression of the bridge's
// helper module); shared by the loader and the boxed kernel.
class PythonCallable {
 public:
  using Finder = std::function<py::object()>;  // runs with the GIL held; raises to refuse
  explicit PythonCallable(Finder find) : find_(std::move(find)) {}

  PythonKernelLoad load() {
    std::call_once(loaded_, [this] {
      try {
        start_interpreter();
      } catch (const std::exception& error) {
        state_ = {PythonKernelLoad::Status::kFailed, error.what()};
        return;
      }
      py::gil_scoped_acquire gil;
      try {
        function_ = find_().release().ptr();  // kept for the process's life: no GIL at exit
      } catch (py::error_already_set& error) {
        const std::string kind = py::str(py::type::handle_of(error.value()).attr("__name__")).cast<std::string>();
        if (kind == "KernelUnavailable") {
          state_ = {PythonKernelLoad::Status::kSkipped, py::str(error.value()).cast<std::string>()};
        } else if (kind == "KernelLoadError") {
          state_ = {PythonKernelLoad::Status::kFailed, py::str(error.value()).cast<std::string>()};
        } else {
          state_ = {PythonKernelLoad::Status::kFailed, python_error_text(error)};
        }
      }
    });
    return state_;
  }

  void call(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    const PythonKernelLoad loaded = load();
    if (loaded.status != PythonKernelLoad::Status::kReady) throw std::runtime_error(loaded.message);
    py::gil_scoped_acquire gil;
    auto [args, kwargs] = python_arguments(op.schema(), *stack);
    py::object result;
    try {
      result = py::reinterpret_borrow<py::object>(function_)(*args, **kwargs);
    } catch (py::error_already_set& error) {
      // The exception's type and message first (a traceback's last line), then the traceback.
      const std::string text = python_error_text(error);
      const size_t last = text.find_last_of('\n');
      throw std::runtime_error("a Python exception: " + (last == std::string::npos ? text : text.substr(last + 1)) + "\n" + text);
    }
    push_results(op.schema(), result, *stack);
  }

 private:
  Finder find_;
  std::once_flag loaded_;
  PythonKernelLoad state_;
  PyObject* function_ = nullptr;
};

class BoxedPythonKernel final : public c10::OperatorKernel {
 public:
  explicit BoxedPythonKernel(std::shared_ptr<PythonCallable> callable) : callable_(std::move(callable)) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
    callable_->call(op, stack);
  }

 private:
  std::shared_ptr<PythonCallable> callable_;
};

PythonKernel make_kernel(std::string op, std::string backend, std::string source, bool needs_cuda,
                         PythonCallable::Finder find) {
  auto callable = std::make_shared<PythonCallable>(std::move(find));
  PythonKernel kernel;
  kernel.op = std::move(op);
  kernel.backend = std::move(backend);
  kernel.source = std::move(source);
  kernel.needs_cuda = needs_cuda;
  kernel.load = [callable] { return callable->load(); };
  kernel.kernel = c10::KernelFunction::makeFromBoxedFunctor(std::make_unique<BoxedPythonKernel>(callable));
  return kernel;
}

py::object helpers() { return py::module_::import("backendbench.kernel_loading"); }

PythonKernel kernel_file(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t folder_start = path.find_last_of('/', slash == 0 ? 0 : slash - 1);
  if (slash == std::string::npos || folder_start == std::string::npos) {
    throw std::runtime_error("python kernel '" + path + "': expected <kernels>/<folder>/<folder>_implementation_<N>.py");
  }
  const std::string folder = path.substr(folder_start + 1, slash - folder_start - 1);
  const std::string file = path.substr(slash + 1);
  const std::string stem = file.substr(0, file.rfind('.'));
  const std::optional<naming::OperatorName> op = naming::OperatorName::from_folder(folder);
  const std::optional<int> number = naming::implementation_number(folder, stem);
  if (!op || !number) throw std::runtime_error(path + ": not a kernel file per the kernel contract");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string function = naming::kernel_function(folder);
  return make_kernel(op->display(), naming::variant_name(*number), path, naming::python_kernel_needs_cuda(text.str()),
                     [path, function] { return helpers().attr("load_kernel_file")(path, function); });
}

std::vector<PythonKernel> op_library(const std::string& name, const std::string& listing_path) {
  const OpLibraryListing listing = read_op_library_listing(name, listing_path);
  std::vector<PythonKernel> kernels;
  for (const naming::OperatorName& op : listing.operators) {
    const std::string display = op.display();
    kernels.push_back(make_kernel(display, name, name + " (Python op library)", listing.is_cuda, [name, display] {
      return helpers().attr("op_library_function")(name, display);
    }));
  }
  return kernels;
}

}  // namespace

BACKENDBENCH_EXPORT_C void backendbench_python_start() {
  start_interpreter();
  py::gil_scoped_acquire gil;
  try {
    // A Triton kernel's module imports it first thing (0.7 s more than torch alone on the H200
    // machine), and a process's first Triton call takes 1.4 s there (most likely Triton building
    // its driver helpers): both paid here.
    helpers().attr("start_triton")();
  } catch (py::error_already_set&) {
    // Its kernels' own import will say why.
  }
}

BACKENDBENCH_EXPORT_C void backendbench_python_kernels(const std::string& manifest_line,
                                                       std::vector<PythonKernel>& kernels) {
  auto after = [&](const char* prefix) { return manifest_line.substr(std::string(prefix).size()); };
  if (manifest_line.rfind(kPythonKernelLine, 0) == 0) {
    kernels.push_back(kernel_file(after(kPythonKernelLine)));
  } else if (manifest_line.rfind(kOpLibraryLine, 0) == 0) {
    const std::string rest = after(kOpLibraryLine);
    const size_t space = rest.find(' ');
    if (space == std::string::npos) {
      throw std::runtime_error("kernel manifest line '" + manifest_line + "': expected op-library <name> <listing file>");
    }
    for (PythonKernel& kernel : op_library(rest.substr(0, space), rest.substr(space + 1))) kernels.push_back(std::move(kernel));
  } else {
    throw std::runtime_error("kernel manifest line '" + manifest_line + "' is not one the Python bridge serves");
  }
}

}  // namespace backendbench
