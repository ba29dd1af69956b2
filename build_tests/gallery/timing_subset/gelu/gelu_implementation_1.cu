// gelu.default: x/2 (1 + erf(x/sqrt 2)), or its tanh approximation, in float for half inputs.
// Written from other ATen operators, never the one it replaces (the no_fallback check), so that
// the timing subset (scripts/isolation_cost.sh: the 914 TorchBench cases of relu, _softmax,
// native_layer_norm, sigmoid, gelu, div, tanh and mean) has a kernel for every case to check and
// time. Half-precision work is done in float, as ATen does. Not fast: a fixed workload.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor gelu_kernel_impl(const at::Tensor& self, c10::string_view approximate) {
  const at::Tensor x = at::isReducedFloatingType(self.scalar_type()) ? self.to(at::kFloat) : self;
  const at::Tensor inner = approximate == "tanh" ? at::tanh((x + x * x * x * 0.044715) * std::sqrt(2.0 / M_PI))
                                                 : at::erf(x * M_SQRT1_2);
  return (x * 0.5 * (inner + 1)).to(self.scalar_type());
}
