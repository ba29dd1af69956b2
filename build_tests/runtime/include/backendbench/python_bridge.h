// The interface between the runtime and the Python bridge (libbackendbench_python.so,
// build_tests/python/): Python kernels (the original's generated_kernels/<op>/*.py) and the
// operators of Python op libraries (flag_gems) as the runtime takes kernels. The runtime loads
// the bridge only when a kernel manifest names something Python, so executables without Python
// kernels never start an interpreter.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backendbench/kernel_binding.h"

namespace backendbench {

// What loading a Python kernel's module found: it runs, it cannot run here (skip, with why), or it
// is broken (fail, with the file and line).
struct PythonKernelLoad {
  enum class Status { kReady, kSkipped, kFailed };
  Status status = Status::kReady;
  std::string message;
};

struct PythonKernel {
  std::string op;       // display name: add.Tensor
  std::string backend;  // impl<N>, or the op library's name
  std::string source;   // the .py file, or the op library's module
  bool needs_cuda = false;  // a Triton kernel, a library that runs on CUDA only
  // Imports the module on first use (so that a process imports only the kernels it runs, and
  // before any observed call); the same answer after.
  std::function<PythonKernelLoad()> load;
  c10::KernelFunction kernel;  // boxed: calls the Python function with the GIL held
};

// Manifest lines the bridge serves: "python <kernel.py>" and "op-library <name> <listing>".
inline constexpr const char* kPythonKernelLine = "python ";
inline constexpr const char* kOpLibraryLine = "op-library ";

// Exported by the bridge: the kernels of one manifest line. Throws std::runtime_error naming the
// line and the cause.
using PythonKernelsFunction = void (*)(const std::string& manifest_line, std::vector<PythonKernel>& kernels);
inline constexpr const char* kPythonKernelsSymbol = "backendbench_python_kernels";
// Exported by the bridge: starts the interpreter and imports torch, and Triton where it is
// installed, before any kernel's module. Throws std::runtime_error when Python does not start.
using PythonStartFunction = void (*)();
inline constexpr const char* kPythonStartSymbol = "backendbench_python_start";

}  // namespace backendbench
