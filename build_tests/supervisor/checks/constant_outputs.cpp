// A constant output (all zeros, say) can pass the tolerance where the reference's values are
// all below it (atol 1e-5 in f32). It fails here when the reference's values are not constant:
// their spread exceeds 8 ulps of their largest magnitude, so rounding noise of a truly
// constant result does not count.
#include "supervisor/check.h"

#include "backendbench/tensor_values.h"

namespace backendbench {
namespace {

// Whether every element is the same value (a NaN makes it not). In the tensor's own dtype, one
// pass and one wait: every draw of every kernel with a floating output asks this, and a float64
// copy of the output first (8 bytes an element, two more passes) cost the supervisor's checks
// most of their time on large outputs. Equality is the same in any wider type.
bool is_constant(const at::Tensor& values) {
  const at::ScalarType dtype = values.scalar_type();
  if (dtype == at::kHalf || dtype == at::kBFloat16 || dtype == at::kFloat || dtype == at::kDouble) {
    const auto [lowest, highest] = at::aminmax(values);
    return (lowest == highest).item<bool>();
  }
  const at::Tensor wide = values.to(at::kDouble);  // float8 and other types aminmax may lack
  return (wide.max() == wide.min()).item<bool>();
}

class ConstantOutputsCheck : public Check {
 public:
  const char* name() const override { return "constant_outputs"; }
  CheckFinding run(const CallRecord& call) const override {
    if (call.facts.undefined_values) return {};
    const std::vector<at::Tensor> expected = tensors_in(call.expected);
    const std::vector<at::Tensor> actual = tensors_in(call.actual);
    for (size_t i = 0; i < expected.size() && i < actual.size(); ++i) {
      const at::Tensor& want = expected[i];
      const at::Tensor& got = actual[i];
      if (!want.defined() || !got.defined() || want.layout() != at::kStrided || got.layout() != at::kStrided) continue;
      if (want.numel() < 2 || got.sizes() != want.sizes() || !at::isFloatingType(want.scalar_type()) ||
          !at::isFloatingType(got.scalar_type())) {
        continue;
      }
      if (!is_constant(got.detach())) continue;
      const at::Tensor got_values = got.detach().to(at::kDouble);
      const at::Tensor want_values = want.detach().to(at::kDouble);
      const at::Tensor finite = want_values.isfinite();
      if (!finite.all().item<bool>()) continue;
      const double spread = (want_values.max() - want_values.min()).item<double>();
      const double scale = want_values.abs().max().item<double>();
      if (spread > 8 * machine_epsilon(want.scalar_type()) * scale) {
        return {"output " + std::to_string(i) + " is constant (every element " +
                std::to_string(got_values.flatten()[0].item<double>()) + ") where the reference's values are not "
                "(they range over " + std::to_string(spread) + "); a constant answer can pass the tolerance only where "
                "every reference value is below it"};
      }
    }
    return {};
  }
};

}  // namespace

const Check& constant_outputs_check() {
  static const ConstantOutputsCheck check;
  return check;
}

}  // namespace backendbench
