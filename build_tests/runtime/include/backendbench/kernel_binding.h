// Included by generated kernel bindings: what a kernel file may rely on having in scope, the
// signature check, and what a kernel library tells the runtime when it is loaded.
//
// Each kernel is its own shared library. It registers nothing when loaded; the runtime finds
// its kernels by calling the one exported C function, backendbench_kernel_entries (dlsym), so
// libraries are loaded from a list (a manifest) at run time and a new or edited kernel never
// relinks or recompiles a suite.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/boxing/KernelFunction.h>
#include <torch/library.h>

#include <cstddef>
#include <type_traits>

#define BACKENDBENCH_EXPORT extern "C++" __attribute__((visibility("default")))
#define BACKENDBENCH_EXPORT_C extern "C" __attribute__((visibility("default")))

namespace backendbench {

// True when `kernel` is exactly a function of type `Expected` (a function type).
template <typename Expected, typename Actual>
constexpr bool is_kernel_signature(Actual* /*kernel*/) {
  return std::is_same_v<Expected, Actual>;
}

// One operator a kernel library serves: its own, or an in-place/out= sibling derived from it.
struct KernelEntry {
  const char* op;       // display name: add.Tensor
  const char* backend;  // impl<N>
  const char* source;   // the kernel file (and, for a derived variant, what it is derived from)
  bool is_cuda;         // a .cu kernel: runs on CUDA tensors
  bool derived;         // an in-place/out= sibling served by a functional kernel: used only
                        // where the operator has no kernel of its own
  c10::KernelFunction (*factory)();
};

// The symbol every kernel library exports.
constexpr const char* kKernelEntriesSymbol = "backendbench_kernel_entries";
using KernelEntries = const KernelEntry* (*)(size_t* count);

}  // namespace backendbench
