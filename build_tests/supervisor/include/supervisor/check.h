// One interface for the checks a kernel call must pass, each its own file in checks/ and
// registered in one place (checks/registry.cpp): adding a check touches only its file and the
// registry. check_case (run_case.h) records one call into a CallRecord and runs every
// registered check that applies to the backend on it.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>

#include <functional>
#include <string>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/compare.h"
#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"

namespace backendbench {

// Everything observed around one call of a backend on one draw of a case's inputs.
struct CallRecord {
  const c10::FunctionSchema& schema;
  const OperatorFacts& facts;
  const Backend& backend;
  std::vector<size_t> written;  // argument positions the operator writes (schema and facts)
  Stack reference_inputs;       // the reference's copy, after its call (written in place)
  Stack kernel_inputs_before;   // the backend's copy, before its call
  Stack kernel_inputs;          // the backend's copy, after its call
  Stack expected;               // the reference's outputs
  Stack actual;                 // the backend's outputs
  // What the call's own process saw (observe.h): dispatched ATen operators, global state
  // changed, threads left, late device writes. From a kernel worker, it can only fail a case.
  InsideObservations inside;
  bool kernels_must_compute = false;  // the strict policy (Settings::kernels_must_compute)
  // The reference computed in float64 from the backend's inputs (before its call), or nullptr
  // where there is none; computed on first use.
  std::function<const Stack*()> precise_inputs;
  std::function<const Stack*()> precise_outputs;
};

struct CheckFinding {
  std::string message;  // "" when the check passed
  double max_abs_error = 0, max_rel_error = 0;  // value checks report them
  bool failed() const { return !message.empty(); }
};

class Check {
 public:
  virtual ~Check() = default;
  virtual const char* name() const = 0;
  // Kernel-only checks (e.g. no fallback to the replaced operator) skip the reference backend.
  virtual bool applies_to(const Backend& backend) const {
    (void)backend;
    return true;
  }
  virtual CheckFinding run(const CallRecord& call) const = 0;
};

// Every check, in the order they run (and their failures are reported).
const std::vector<const Check*>& registered_checks();
const Check* find_check(const std::string& name);


}  // namespace backendbench
