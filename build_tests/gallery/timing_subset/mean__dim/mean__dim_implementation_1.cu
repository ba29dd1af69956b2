// mean.dim: sum / count, the sum accumulated in float for half inputs.
// Written from other ATen operators, never the one it replaces (the no_fallback check), so that
// the timing subset (scripts/isolation_cost.sh: the 914 TorchBench cases of relu, _softmax,
// native_layer_norm, sigmoid, gelu, div, tanh and mean) has a kernel for every case to check and
// time. Half-precision work is done in float, as ATen does. Not fast: a fixed workload.
#include <ATen/ATen.h>

at::Tensor mean__dim_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                 std::optional<at::ScalarType> dtype) {
  const at::ScalarType result_type = dtype.value_or(self.scalar_type());
  const at::ScalarType accumulate = at::isReducedFloatingType(result_type) ? at::kFloat : result_type;
  int64_t count = 1;
  if (dim && !dim->empty()) {
    for (const int64_t d : *dim) count *= self.size(d);
  } else {
    count = self.numel();
  }
  return (at::sum(self, dim, keepdim, accumulate) / count).to(result_type);
}
