// Arguments the schema does not mark as written (Tensor(a!)) must be unchanged after the call,
// element for element (NaN equals NaN).
#include "supervisor/check.h"

#include <algorithm>

#include "backendbench/tensor_values.h"

namespace backendbench {
namespace {

bool same_values(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return false;
  // ATen's CPU equal/eq have no complex-half kernel: compare those as complex64.
  if (a.scalar_type() == at::kComplexHalf) return same_values(a.to(at::kComplexFloat), b.to(at::kComplexFloat));
  if (a.layout() != at::kStrided) return at::equal(a.to_dense(), b.to_dense());
  if (at::equal(a, b)) return true;
  if (!at::isFloatingType(a.scalar_type()) && !at::isComplexType(a.scalar_type())) return false;
  return ((a == b) | (a.isnan() & b.isnan())).all().item<bool>();
}

class ReadOnlyInputsCheck : public Check {
 public:
  const char* name() const override { return "read_only_inputs"; }
  CheckFinding run(const CallRecord& call) const override {
    const auto& arguments = call.schema.arguments();
    const Stack& before = call.kernel_inputs_before;
    const Stack& after = call.kernel_inputs;
    for (size_t i = 0; i < arguments.size() && i < before.size() && i < after.size(); ++i) {
      if (std::find(call.written.begin(), call.written.end(), i) != call.written.end()) continue;
      // Not Tensor?[] index lists: ATen's own kernels replace entries of the list they are given
      // (_unsafe_masked_index stores clamped indices in it), which a caller never sees.
      if (!before[i].isTensor() && !before[i].isTensorList()) continue;
      const std::vector<at::Tensor> old_tensors = tensors_in({before[i]});
      const std::vector<at::Tensor> new_tensors = tensors_in({after[i]});
      for (size_t t = 0; t < old_tensors.size() && t < new_tensors.size(); ++t) {
        if (!same_values(old_tensors[t], new_tensors[t])) {
          return {"argument '" + arguments[i].name() + "' is read-only in the schema but the kernel changed it"};
        }
      }
    }
    return {};
  }
};

}  // namespace

const Check& read_only_inputs_check() {
  static const ReadOnlyInputsCheck check;
  return check;
}

}  // namespace backendbench
