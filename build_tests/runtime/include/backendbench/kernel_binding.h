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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#define BACKENDBENCH_EXPORT extern "C++" __attribute__((visibility("default")))
#define BACKENDBENCH_EXPORT_C extern "C" __attribute__((visibility("default")))

namespace backendbench {

// True when `kernel` is exactly a function of type `Expected` (a function type).
template <typename Expected, typename Actual>
constexpr bool is_kernel_signature(Actual* /*kernel*/) {
  return std::is_same_v<Expected, Actual>;
}

// A kernel as the runtime takes it: callable alone (the tests), and registrable with the
// dispatcher as an override of its operator (OverridingKernel, below).
struct OverridingState;
struct DispatcherKernel {
  c10::KernelFunction kernel;
  c10::KernelFunction (*overriding)(const c10::OperatorHandle& op, OverridingState* state);
};

// What an overriding kernel (below) reads when the dispatcher calls it; owned by the
// OverrideGuard that registered it (overrides.h), which fills it in.
struct OverridingState {
  c10::KernelFunction aten;  // ATen's kernel for the key, captured before ours was registered
  std::atomic<int64_t> kernel_calls{0};
  std::atomic<int64_t> aten_calls{0};
  // How many overriding kernels run on the calling thread now (one counter per process: the
  // runtime's, reached through this pointer because a kernel library cannot link the runtime).
  int& (*running_on_this_thread)() = nullptr;
};

// What the dispatcher can register for a kernel, below, is instantiated per kernel function, and
// in the one library every kernel's function has the same name (relu_kernel_impl in impl1.cpp
// and in impl2.cu): instantiations with external linkage would be merged by the linker into one,
// and impl2's entry would run impl1. Inside an unnamed namespace each binding keeps its own.
namespace {

// What the dispatcher runs for an overridden operator: the kernel, called directly with the
// operator's own argument types (no boxing), or ATen's kernel when an overriding kernel is
// already running on this thread (the recursion rule of overrides.h). Instantiated in the
// kernel's binding, where its signature is known.
template <auto* Kernel, typename Signature = std::remove_pointer_t<decltype(Kernel)>>
class OverridingKernel;

template <auto* Kernel, typename Return, typename... Args>
class OverridingKernel<Kernel, Return(Args...)> final : public c10::OperatorKernel {
 public:
  OverridingKernel(const c10::OperatorHandle& op, OverridingState* state) : op_(op), state_(state) {}

  Return operator()(c10::DispatchKeySet keys, Args... args) {
    int& running = state_->running_on_this_thread();
    if (running > 0) {
      state_->aten_calls.fetch_add(1, std::memory_order_relaxed);
      return state_->aten.template call<Return, Args...>(op_, keys, std::forward<Args>(args)...);
    }
    state_->kernel_calls.fetch_add(1, std::memory_order_relaxed);
    struct Running {  // this kernel, until it returns or throws
      int& count;
      explicit Running(int& c) : count(c) { ++count; }
      ~Running() { --count; }
    } const scope(running);
    return Kernel(std::forward<Args>(args)...);
  }

 private:
  c10::OperatorHandle op_;
  OverridingState* state_;
};

template <auto* Kernel>
c10::KernelFunction make_overriding_kernel(const c10::OperatorHandle& op, OverridingState* state) {
  using Overriding = OverridingKernel<Kernel>;
  return c10::KernelFunction::makeFromUnboxedFunctor<false, Overriding>(std::make_unique<Overriding>(op, state));
}

template <auto* Kernel>
DispatcherKernel dispatcher_kernel_of() {
  return {c10::KernelFunction::makeFromUnboxedRuntimeFunction(Kernel), &make_overriding_kernel<Kernel>};
}

}  // namespace

// One operator a kernel library serves: its own, or an in-place/out= sibling derived from it.
struct KernelEntry {
  const char* op;       // display name: add.Tensor
  const char* backend;  // impl<N>
  const char* source;   // the kernel file (and, for a derived variant, what it is derived from)
  bool is_cuda;         // a .cu kernel: runs on CUDA tensors
  bool derived;         // an in-place/out= sibling served by a functional kernel: used only
                        // where the operator has no kernel of its own
  DispatcherKernel (*factory)();
};

// The symbol every kernel library exports.
constexpr const char* kKernelEntriesSymbol = "backendbench_kernel_entries";
using KernelEntries = const KernelEntry* (*)(size_t* count);

}  // namespace backendbench
