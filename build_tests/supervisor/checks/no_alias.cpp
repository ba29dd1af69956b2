// Returned tensors the schema does not mark as aliases (no `Tensor(a)`) must not share storage
// with any input: a caller may write one without expecting the other to change.
#include "supervisor/check.h"

#include "backendbench/tensor_values.h"

namespace backendbench {
namespace {

class NoAliasCheck : public Check {
 public:
  const char* name() const override { return "no_alias"; }
  CheckFinding run(const CallRecord& call) const override {
    if (call.facts.returns_unannotated_alias) return {};
    const auto& returns = call.schema.returns();
    const Stack& inputs = call.kernel_inputs;
    for (size_t r = 0; r < returns.size() && r < call.actual.size(); ++r) {
      if (returns[r].alias_info() != nullptr || !call.actual[r].isTensor()) continue;
      const at::Tensor& output = call.actual[r].toTensor();
      if (!output.defined() || output.layout() != at::kStrided || output.numel() == 0) continue;
      for (size_t i = 0; i < inputs.size() && i < call.schema.arguments().size(); ++i) {
        // Tensor and Tensor[] arguments; not Tensor?[] index lists, which ATen itself rewrites.
        if (!inputs[i].isTensor() && !inputs[i].isTensorList()) continue;
        for (const at::Tensor& input : tensors_in({inputs[i]})) {
          if (input.defined() && input.layout() == at::kStrided && input.numel() > 0 && output.is_alias_of(input)) {
            return {"output " + std::to_string(r) + " shares memory with argument '" + call.schema.arguments()[i].name() +
                    "', but the schema returns a new tensor (no alias annotation)"};
          }
        }
      }
    }
    return {};
  }
};

}  // namespace

const Check& no_alias_check() {
  static const NoAliasCheck check;
  return check;
}

}  // namespace backendbench
