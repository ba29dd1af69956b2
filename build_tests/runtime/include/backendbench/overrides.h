// Kernels as a PyTorch backend: registers chosen kernels with the dispatcher for their device's
// key (CPU or CUDA), so every caller of the operator — eager models, at::, torch.* — runs them,
// and removes them when the guard is destroyed (the dispatcher's RAII registration handles).
//
// Recursion rule: while an overriding kernel runs on a thread, every overridden operator called
// on that thread runs ATen's own kernel, captured before the override was registered
// (OperatorHandle::getComputedKernelForDispatchKey). A kernel that calls at::relu inside its
// relu, or another overridden operator, gets ATen's, never itself or another override.
// Autograd is untouched: the overrides sit below the autograd keys, as ATen's kernels do.
// A registered kernel is called unboxed, with the operator's own argument types, through the
// OverridingKernel its binding instantiates (kernel_binding.h), which applies this rule.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <map>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/verdict.h"

namespace backendbench {

// One kernel to register for one operator.
struct OverrideChoice {
  std::string op_display;  // add.Tensor
  std::string backend;     // impl<N>
  std::string source;      // the kernel file
  c10::DispatchKey key = c10::DispatchKey::CPU;
  DispatcherKernel kernel;
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

// What earlier runs say of one kernel of one operator: its failed cases, and its speedups where
// ./bench timed it.
struct KernelRecord {
  int cases = 0;                      // verdicts that ran (passed or failed; skips not counted)
  std::vector<std::string> failures;  // "<suite> <case>: <first error>" per failed verdict
  double log_speedup_sum = 0;         // over passed timed verdicts
  int timed = 0;
  bool passed() const { return cases > 0 && failures.empty(); }
};
using KernelRecords = std::map<std::pair<std::string, std::string>, KernelRecord>;  // (op, backend)

// Every *.verdicts.jsonl below `results_directory` (the layout the CTest entries and ./bench
// write), folded per (operator, backend). A missing folder gives no records; a line that is not
// a verdict throws std::invalid_argument (read_verdicts).
KernelRecords read_kernel_records(const std::string& results_directory);
// Folds one verdict into `records` (a skipped one counts nothing).
void add_to_records(KernelRecords& records, const Verdict& verdict);

// Which kernels of a registry become overrides. `include`/`exclude` take operator filters as
// naming::matches_filter reads them (add.Tensor, or add for every add overload); an empty
// `include` means all.
//
// Per operator, with records: among the kernels that passed every case they ran, the fastest
// by geometric-mean speedup where any was timed, else the lowest-numbered one. A kernel that
// failed a case is not registered (a warning names its failing cases) unless `force_failing`,
// and then only when no passing kernel exists, with a warning. Without records for any of an
// operator's kernels, the lowest-numbered kernel is registered, with a warning that it is
// unverified. Derived in-place/out= variants count as kernels where the operator has no own.
struct OverrideSelection {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  KernelRecords records;
  bool force_failing = false;
};
struct OverridePlan {
  std::vector<OverrideChoice> choices;
  std::vector<std::string> warnings;
};
OverridePlan choose_overrides(const BackendRegistry& registry, const OverrideSelection& selection);
// Whether `include` (empty: every operator) and `exclude` select an operator, as choose_overrides reads them.
bool is_selected(const std::string& op_display, const std::vector<std::string>& include,
                 const std::vector<std::string>& exclude);

}  // namespace backendbench
