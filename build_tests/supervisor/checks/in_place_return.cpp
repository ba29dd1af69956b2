// In-place and out= operators return the argument they write, not a new tensor.
#include "supervisor/check.h"

namespace backendbench {
namespace {

class InPlaceReturnCheck : public Check {
 public:
  const char* name() const override { return "in_place_return"; }
  CheckFinding run(const CallRecord& call) const override {
    const auto& returns = call.schema.returns();
    if (returns.empty() || !returns[0].alias_info() || !returns[0].alias_info()->isWrite() || call.actual.empty() ||
        !call.actual[0].isTensor()) {
      return {};
    }
    const bool returns_it = !call.written.empty() && call.actual[0].toTensor().is_same(call.kernel_inputs[call.written[0]].toTensor());
    if (returns_it) return {};
    return {"an in-place operator must return its argument '" +
            (call.written.empty() ? std::string("self") : call.schema.arguments()[call.written[0]].name()) +
            "', not a new tensor"};
  }
};

}  // namespace

const Check& in_place_return_check() {
  static const InPlaceReturnCheck check;
  return check;
}

}  // namespace backendbench
