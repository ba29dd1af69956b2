// Outputs match the reference recursively: tensors by layout, shape, dtype, device and values
// (per-dtype tolerance, NaN equals NaN, a second chance against the float64 reference); tuples
// and lists element-wise; other values exactly.
#include "supervisor/check.h"

namespace backendbench {
namespace {

class OutputsCheck : public Check {
 public:
  const char* name() const override { return "outputs"; }
  CheckFinding run(const CallRecord& call) const override {
    const Comparison comparison =
        compare_with_second_chance(call.expected, call.actual, compare_options_for(call.facts), call.precise_outputs);
    CheckFinding finding;
    finding.max_abs_error = comparison.max_abs_error;
    finding.max_rel_error = comparison.max_rel_error;
    if (!comparison.equal) finding.message = comparison.message;
    return finding;
  }
};

}  // namespace

const Check& outputs_check() {
  static const OutputsCheck check;
  return check;
}

}  // namespace backendbench
