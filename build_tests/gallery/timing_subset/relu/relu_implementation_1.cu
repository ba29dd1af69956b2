// relu.default: clamp_min(x, 0).
// Written from other ATen operators, never the one it replaces (the no_fallback check), so that
// the timing subset (scripts/isolation_cost.sh: the 914 TorchBench cases of relu, _softmax,
// native_layer_norm, sigmoid, gelu, div, tanh and mean) has a kernel for every case to check and
// time. Half-precision work is done in float, as ATen does. Not fast: a fixed workload.
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0); }
