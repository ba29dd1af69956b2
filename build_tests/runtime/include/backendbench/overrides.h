// Kernels as a PyTorch backend: registers chosen kernels with the dispatcher for their device's
// key (CPU or CUDA), so every caller of the operator — eager models, at::, torch.* — runs them,
// and removes them when the guard is destroyed (the dispatcher's RAII registration handles).
//
// Recursion rule: while an overriding kernel runs on a thread, every overridden operator called
// on that thread runs ATen's own kernel, captured before the override was registered
// (OperatorHandle::getComputedKernelForDispatchKey). A kernel that calls at::relu inside its
// relu, or another overridden operator, gets ATen's, never itself or another override.
// Autograd is untouched: the overrides sit below the autograd keys, as ATen's kernels do.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backendbench/backend.h"

namespace backendbench {

// One kernel to register for one operator.
struct OverrideChoice {
  std::string op_display;  // add.Tensor
  std::string backend;     // impl<N>
  std::string source;      // the kernel file
  c10::DispatchKey key = c10::DispatchKey::CPU;
  c10::KernelFunction kernel;
};

// How often each overridden operator ran our kernel, and how often ATen's (called from inside
// an overriding kernel).
struct OverrideCalls {
  int64_t kernel = 0;
  int64_t aten_inside_kernel = 0;
};

class OverrideGuard {
 public:
  // Registers every choice; throws std::runtime_error naming the operator when one is not a
  // known operator or ATen has no kernel for its key to fall back on. Nothing stays registered
  // after a throw.
  explicit OverrideGuard(std::vector<OverrideChoice> choices);
  ~OverrideGuard();
  OverrideGuard(const OverrideGuard&) = delete;
  OverrideGuard& operator=(const OverrideGuard&) = delete;

  // "add.Tensor impl1 on CPU (generated_kernels/add__Tensor/add__Tensor_implementation_1.cpp)".
  std::vector<std::string> registered() const;
  std::map<std::string, OverrideCalls> calls() const;

  struct Registration;  // one operator's handle, counters and captured ATen kernel

 private:
  std::vector<std::unique_ptr<Registration>> registrations_;
};

// Which kernels of a registry become overrides. `include`/`exclude` take display names
// (add.Tensor) or base names (add: every add overload); an empty `include` means all. Per
// operator the lowest-numbered kernel of its own is chosen, else a derived one.
struct OverrideSelection {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
};
std::vector<OverrideChoice> choose_overrides(const BackendRegistry& registry, const OverrideSelection& selection);

}  // namespace backendbench
