// Arguments an operator writes (self of in-place operators, out=, and writes the facts table
// records) must hold what the reference writes into them.
#include "supervisor/check.h"

namespace backendbench {
namespace {

class WrittenArgumentsCheck : public Check {
 public:
  const char* name() const override { return "written_arguments"; }
  CheckFinding run(const CallRecord& call) const override {
    CompareOptions options;
    options.scale_ulps = compare_options_for(call.facts).scale_ulps;
    for (size_t index : call.written) {
      const Comparison in_place = compare_with_second_chance(
          {call.reference_inputs[index]}, {call.kernel_inputs[index]}, options, [&]() -> const Stack* {
            static thread_local Stack one;
            const Stack* precise = call.precise_inputs ? call.precise_inputs() : nullptr;
            if (precise == nullptr) return nullptr;
            one = {(*precise)[index]};
            return &one;
          });
      if (!in_place.equal) {
        return {"argument '" + call.schema.arguments()[index].name() +
                "' is written in place, but not as the reference writes it: " + in_place.message};
      }
    }
    return {};
  }
};

}  // namespace

const Check& written_arguments_check() {
  static const WrittenArgumentsCheck check;
  return check;
}

}  // namespace backendbench
