// _softmax.default: exp(x - max) / sum, in float for half inputs.
// Written from other ATen operators, never the one it replaces (the no_fallback check), so that
// the timing subset (scripts/isolation_cost.sh: the 914 TorchBench cases of relu, _softmax,
// native_layer_norm, sigmoid, gelu, div, tanh and mean) has a kernel for every case to check and
// time. Half-precision work is done in float, as ATen does. Not fast: a fixed workload.
#include <ATen/ATen.h>

at::Tensor _softmax_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  const at::ScalarType result_type = half_to_float ? at::kFloat : self.scalar_type();
  const at::Tensor x = at::isReducedFloatingType(self.scalar_type()) ? self.to(at::kFloat) : self;
  const at::Tensor e = at::exp(x - at::amax(x, {dim}, /*keepdim=*/true));
  return (e / at::sum(e, {dim}, /*keepdim=*/true)).to(result_type);
}
