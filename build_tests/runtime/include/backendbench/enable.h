// The backend as a C++ program uses it: the kernels that the backend library (built by
// backendbench_add_backend; `backendbench::backend` in a project that add_subdirectory()s this one) holds,
// registered with PyTorch's dispatcher while an Enabled guard lives. Every caller of an
// overridden operator in the process (eager models, at::, torch.* from Python) runs the
// kernel; the recursion rule, autograd and call counts are OverrideGuard's (overrides.h).
//
// Which kernel serves an operator: choose_overrides (overrides.h) over the records in
// `results_directory` (the CTest entries' and ./bench's verdicts). A kernel without records is
// first checked, when `check_unverified`, on the cases of the suites built into the library
// (smoke and edge): the same checks as the tests, one draw set per case, with a fresh salt.
//
//   backendbench::Enabled backend({.include = {"relu", "add"}});
//   model->forward(x);  // relu and add run the kernels
//
// Implemented in the backend library, not in backendbench::runtime.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backendbench/overrides.h"

namespace backendbench {

struct EnableOptions {
  std::vector<std::string> include;  // operator filters (relu, add.Tensor); empty: every kernel
  std::vector<std::string> exclude;
  std::string results_directory;     // "": $BACKENDBENCH_RESULTS when set, else no records
  bool force_failing = false;        // register a failing kernel where no passing one exists
  bool check_unverified = true;      // check kernels without records on the built-in cases
};

class Enabled {
 public:
  explicit Enabled(const EnableOptions& options = {});
  ~Enabled();
  Enabled(const Enabled&) = delete;
  Enabled& operator=(const Enabled&) = delete;

  // What registering chose not to do or could not verify (a failing kernel left out, one
  // registered unverified), one line each.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // "relu.default impl1 on CPU (…/relu_implementation_1.cpp)" per registered kernel.
  std::vector<std::string> registered() const;
  // Per overridden operator: calls that ran the kernel, and ATen calls made inside kernels.
  std::map<std::string, OverrideCalls> calls() const;
  // How many kernels were checked before registering, and the wall time that took.
  int checked_kernels() const { return checked_kernels_; }
  double check_seconds() const { return check_seconds_; }

 private:
  std::unique_ptr<OverrideGuard> guard_;
  std::vector<std::string> warnings_;
  int checked_kernels_ = 0;
  double check_seconds_ = 0;
};

// Every kernel the library holds: "relu.default impl1 CPU (…/relu_implementation_1.cpp)".
std::vector<std::string> available_kernels();

}  // namespace backendbench
