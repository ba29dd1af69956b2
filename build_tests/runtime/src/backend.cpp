// The backends and their registry; see backend.h. Registration happens in one place:
// backends() below for the built-in ones, load_kernel_library for kernel libraries.
#include "backendbench/backend.h"

#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "backendbench/build_paths.h"
#include "backendbench/kernel_binding.h"
#include "backendbench/python_bridge.h"
#include "backendbench/tensor_values.h"
#include "language/naming.h"

namespace backendbench {
namespace {

Stack call_through_dispatcher(const c10::OperatorHandle& op, Stack stack) {
  op.callBoxed(&stack);
  return stack;
}

// aten through the dispatcher: the reference, standing in as a kernel.
class AtenBackend : public Backend {
 public:
  AtenBackend() : Backend(naming::kReferenceBackend, Kind::kReference) {}
  c10::Device device(const Settings& settings) const override { return reference_device(settings); }
  Stack call(const c10::OperatorHandle& op, Stack stack, c10::Device) const override {
    return call_through_dispatcher(op, std::move(stack));
  }
};

// ./bench's instrument check: the aten operator measured as the kernel too.
class AtenSelfBackend : public Backend {
 public:
  AtenSelfBackend() : Backend(naming::kSelfCalibrationBackend, Kind::kCalibration) {}
  c10::Device device(const Settings& settings) const override { return reference_device(settings); }
  Stack call(const c10::OperatorHandle& op, Stack stack, c10::Device) const override {
    return call_through_dispatcher(op, std::move(stack));
  }
};

// A kernel that does the work twice; its second call runs on a copy of the inputs made when
// the case is bound, so both calls start from cold memory (the flush before each sample
// evicts both copies), not a warm re-read of the first call's data.
class AtenTwiceBackend : public Backend {
 public:
  AtenTwiceBackend() : Backend(naming::kTwiceCalibrationBackend, Kind::kCalibration) {}
  c10::Device device(const Settings& settings) const override { return reference_device(settings); }
  Stack call(const c10::OperatorHandle& op, Stack stack, c10::Device device) const override {
    return bind(op, stack, device)(std::move(stack));
  }
  BoundCall bind(const c10::OperatorHandle& op, const Stack& inputs, c10::Device) const override {
    const Stack second_copy = clone_inputs(inputs);
    return [op, second_copy](Stack stack) {
      call_through_dispatcher(op, second_copy);  // in place, it drifts; only its time matters
      return call_through_dispatcher(op, std::move(stack));
    };
  }
};

// A Python kernel or an op library's operator (python_bridge.h), called boxed through the
// bridge: on CUDA tensors when it needs CUDA (Triton), else on the run's device.
class PythonKernelBackend : public Backend {
 public:
  explicit PythonKernelBackend(PythonKernel kernel) : Backend(kernel.backend, Kind::kKernel), kernel_(std::move(kernel)) {}
  c10::Device device(const Settings& settings) const override {
    return kernel_.needs_cuda ? c10::Device(c10::DeviceType::CUDA, 0) : reference_device(settings);
  }
  std::string source() const override { return kernel_.source; }
  bool launches_from_python() const override { return true; }
  std::optional<Unusable> unusable() const override {
    const PythonKernelLoad loaded = kernel_.load();
    if (loaded.status == PythonKernelLoad::Status::kReady) return std::nullopt;
    return Unusable{loaded.status == PythonKernelLoad::Status::kSkipped, loaded.message};
  }
  Stack call(const c10::OperatorHandle& op, Stack stack, c10::Device device) const override {
    const c10::DispatchKey key = device.is_cuda() ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU;
    kernel_.kernel.callBoxed(op, c10::DispatchKeySet(key), &stack);
    return stack;
  }

 private:
  PythonKernel kernel_;
};

// The bridge, loaded on the first Python line of a manifest; its path is fixed at build time.
void* python_bridge_symbol(const char* symbol) {
  const char* path = build_paths::python_bridge();
  if (path == nullptr) {
    throw std::runtime_error("this build has no Python bridge (no embeddable Python was found when it was configured)");
  }
  static void* library = [path] {
    void* loaded = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (loaded == nullptr) throw std::runtime_error(std::string("cannot load the Python bridge ") + path + ": " + dlerror());
    return loaded;
  }();
  void* found = dlsym(library, symbol);
  if (found == nullptr) throw std::runtime_error(std::string(path) + " does not export " + symbol);
  return found;
}

PythonKernelsFunction python_bridge() {
  static PythonKernelsFunction function = reinterpret_cast<PythonKernelsFunction>(python_bridge_symbol(kPythonKernelsSymbol));
  return function;
}

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// One kernel of a kernel library, called through its binding as a c10::KernelFunction with
// the operator's exact signature.
class KernelLibraryBackend : public Backend {
 public:
  explicit KernelLibraryBackend(const KernelEntry& entry)
      : Backend(entry.backend, Kind::kKernel),
        source_(entry.source),
        is_cuda_(entry.is_cuda),
        derived_(entry.derived),
        kernel_(entry.factory()) {}
  bool is_derived() const override { return derived_; }
  c10::Device device(const Settings&) const override {
    return is_cuda_ ? c10::Device(c10::DeviceType::CUDA, 0) : c10::Device(c10::DeviceType::CPU);
  }
  std::string source() const override { return source_; }
  std::optional<DispatcherKernel> dispatcher_kernel() const override { return kernel_; }
  Stack call(const c10::OperatorHandle& op, Stack stack, c10::Device device) const override {
    const c10::DispatchKey key = device.is_cuda() ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU;
    kernel_.kernel.callBoxed(op, c10::DispatchKeySet(key), &stack);
    return stack;
  }

 private:
  std::string source_;
  bool is_cuda_;
  bool derived_;
  DispatcherKernel kernel_;
};

// impl2 before impl10.
bool backend_order(const std::unique_ptr<Backend>& a, const std::unique_ptr<Backend>& b) {
  if (a->name().size() != b->name().size()) return a->name().size() < b->name().size();
  return a->name() < b->name();
}

}  // namespace

Backend::ObservedCall Backend::call_observed(const c10::OperatorHandle& op, Stack stack, c10::Device device,
                                             const InputDraw*) const {
  ObservedCall observed;
  observed.inside = observe_call([&] { return call(op, std::move(stack), device); }, observed.outputs, device);
  return observed;
}

namespace {

uint64_t value_bytes(const c10::IValue& value) {
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    return tensor.defined() ? static_cast<uint64_t>(tensor.numel()) * tensor.element_size() : 0;
  }
  uint64_t bytes = 0;
  if (value.isTensorList()) {
    for (const at::Tensor& tensor : value.toTensorVector()) bytes += value_bytes(tensor);
  } else if (value.isList()) {
    for (const c10::IValue& item : value.toListRef()) bytes += value_bytes(item);
  } else if (value.isTuple()) {
    for (const c10::IValue& item : value.toTupleRef().elements()) bytes += value_bytes(item);
  }
  return bytes;
}

// Each draw prepared, then called here (call_observed).
class DrawCallsHere : public Backend::DrawCalls {
 public:
  DrawCallsHere(const Backend& backend, const c10::OperatorHandle& op, c10::Device device, std::vector<InputDraw> draws)
      : DrawCalls(op, device, std::move(draws)), backend_(backend) {}
  std::optional<Backend::ObservedCall> next(const std::function<Stack*()>& prepare) override {
    const InputDraw& drawn_from = draws_[take_next()];
    Stack* stack = prepare();
    if (stack == nullptr) return std::nullopt;
    return backend_.call_observed(op_, *stack, device_, &drawn_from);
  }

 private:
  const Backend& backend_;
};

}  // namespace

uint64_t stack_bytes(const Stack& stack) {
  uint64_t bytes = 0;
  for (const c10::IValue& value : stack) bytes += value_bytes(value);
  return bytes;
}

void Backend::DrawCalls::expect_outputs(const Stack& outputs) { expected_output_bytes_ = stack_bytes(outputs); }

std::unique_ptr<Backend::DrawCalls> Backend::call_draws(const c10::OperatorHandle& op, c10::Device device,
                                                        std::vector<InputDraw> draws) const {
  return std::make_unique<DrawCallsHere>(*this, op, device, std::move(draws));
}

BoundCall Backend::bind(const c10::OperatorHandle& op, const Stack&, c10::Device device) const {
  return [this, op, device](Stack stack) { return call(op, std::move(stack), device); };
}

void BackendRegistry::add(std::unique_ptr<Backend> backend) { generic_.push_back(std::move(backend)); }

void BackendRegistry::add(const std::string& op_display, std::unique_ptr<Backend> backend) {
  std::vector<std::unique_ptr<Backend>>& list = per_operator_[op_display];
  for (const auto& existing : list) {
    if (existing->name() == backend->name() && existing->is_derived() == backend->is_derived()) {
      throw std::runtime_error("two kernels register " + backend->name() + " of " + op_display + ": " +
                               existing->source() + " and " + backend->source());
    }
  }
  list.push_back(std::move(backend));
  std::sort(list.begin(), list.end(), backend_order);
}

const Backend& BackendRegistry::reference() const {
  for (const auto& backend : generic_) {
    if (backend->kind() == Backend::Kind::kReference) return *backend;
  }
  throw std::logic_error("no reference backend registered");
}

std::vector<const Backend*> BackendRegistry::for_operator(const std::string& op_display, bool with_calibration) const {
  std::vector<const Backend*> found = {&reference()};
  if (auto own = per_operator_.find(op_display); own != per_operator_.end()) {
    const bool has_own = std::any_of(own->second.begin(), own->second.end(),
                                     [](const std::unique_ptr<Backend>& backend) { return !backend->is_derived(); });
    for (const auto& backend : own->second) {
      if (backend->is_derived() != has_own) found.push_back(backend.get());
    }
  }
  for (const auto& backend : generic_) {
    if (with_calibration && backend->kind() == Backend::Kind::kCalibration) found.push_back(backend.get());
  }
  return found;
}

const Backend* BackendRegistry::find(const std::string& op_display, const std::string& name) const {
  for (const Backend* backend : for_operator(op_display, /*with_calibration=*/true)) {
    if (backend->name() == name) return backend;
  }
  return nullptr;
}

std::vector<std::string> BackendRegistry::operators() const {
  std::vector<std::string> names;
  for (const auto& [name, unused] : per_operator_) names.push_back(name);
  return names;
}

void BackendRegistry::remove_worker_backends() {
  for (auto it = per_operator_.begin(); it != per_operator_.end();) {
    std::vector<std::unique_ptr<Backend>>& kept = it->second;
    kept.erase(std::remove_if(kept.begin(), kept.end(), [](const std::unique_ptr<Backend>& b) { return b->runs_in_worker(); }),
               kept.end());
    it = kept.empty() ? per_operator_.erase(it) : std::next(it);
  }
}

BackendRegistry& backends() {
  static BackendRegistry registry = [] {
    BackendRegistry built;
    built.add(std::make_unique<AtenBackend>());
    built.add(std::make_unique<AtenSelfBackend>());
    built.add(std::make_unique<AtenTwiceBackend>());
    return built;
  }();
  return registry;
}

void load_kernel_library(const std::string& path) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) throw std::runtime_error("cannot load kernel library " + path + ": " + dlerror());
  auto entries = reinterpret_cast<KernelEntries>(dlsym(library, kKernelEntriesSymbol));
  if (entries == nullptr) {
    throw std::runtime_error("kernel library " + path + " does not export " + kKernelEntriesSymbol +
                             "; expected a library built from a backendbench binding");
  }
  add_kernel_entries(entries, path);
}

void add_kernel_entries(KernelEntries entries, const std::string& where) {
  size_t count = 0;
  const KernelEntry* first = entries(&count);
  if (first == nullptr && count > 0) throw std::runtime_error(where + " lists " + std::to_string(count) + " kernels but gives none");
  for (size_t i = 0; i < count; ++i) backends().add(first[i].op, std::make_unique<KernelLibraryBackend>(first[i]));
}

void load_kernel_manifest(const std::string& path, int only_line) {
  std::ifstream manifest(path);
  if (!manifest) throw std::runtime_error("cannot read the kernel manifest " + path);
  std::string line;
  int number = -1;  // of the non-empty lines
  while (std::getline(manifest, line)) {
    if (line.empty()) continue;
    ++number;
    if (only_line >= 0 && number != only_line) continue;
    if (starts_with(line, kPythonKernelLine) || starts_with(line, kOpLibraryLine)) {
      std::vector<PythonKernel> kernels;
      python_bridge()(line, kernels);
      for (PythonKernel& kernel : kernels) {
        const std::string op = kernel.op;
        backends().add(op, std::make_unique<PythonKernelBackend>(std::move(kernel)));
      }
    } else {
      load_kernel_library(line);
    }
  }
  if (only_line > number) {
    throw std::runtime_error("the kernel manifest " + path + " has no line " + std::to_string(only_line + 1) +
                             "; expected one of its " + std::to_string(number + 1) + " kernel lines");
  }
}

void start_python_kernels() { reinterpret_cast<PythonStartFunction>(python_bridge_symbol(kPythonStartSymbol))(); }

}  // namespace backendbench
