// sigmoid.default: 1 / (1 + exp(-x)), in float for half inputs.
// Written from other ATen operators, never the one it replaces (the no_fallback check), so that
// the timing subset (scripts/isolation_cost.sh: the 914 TorchBench cases of relu, _softmax,
// native_layer_norm, sigmoid, gelu, div, tanh and mean) has a kernel for every case to check and
// time. Half-precision work is done in float, as ATen does. Not fast: a fixed workload.
#include <ATen/ATen.h>

at::Tensor sigmoid_kernel_impl(const at::Tensor& self) {
  const at::Tensor x = at::isReducedFloatingType(self.scalar_type()) ? self.to(at::kFloat) : self;
  return at::reciprocal(at::exp(-x) + 1).to(self.scalar_type());
}
