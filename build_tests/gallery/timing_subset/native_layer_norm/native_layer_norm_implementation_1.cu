// native_layer_norm.default: (x - mean) * rsqrt(var + eps) * weight + bias over the last
// dimensions; mean and rstd kept (on CUDA in float for half inputs, as ATen's; on the CPU in the
// input's type).
// Written from other ATen operators, never the one it replaces (the no_fallback check), so that
// the timing subset (scripts/isolation_cost.sh: the 914 TorchBench cases of relu, _softmax,
// native_layer_norm, sigmoid, gelu, div, tanh and mean) has a kernel for every case to check and
// time. Half-precision work is done in float, as ATen does. Not fast: a fixed workload.
#include <ATen/ATen.h>

#include <numeric>
#include <tuple>
#include <vector>

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_kernel_impl(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                                                              const std::optional<at::Tensor>& weight,
                                                                              const std::optional<at::Tensor>& bias, double eps) {
  const at::ScalarType accumulate = at::isReducedFloatingType(input.scalar_type()) ? at::kFloat : input.scalar_type();
  std::vector<int64_t> dims(normalized_shape.size());
  std::iota(dims.begin(), dims.end(), input.dim() - static_cast<int64_t>(normalized_shape.size()));
  const at::Tensor x = input.to(accumulate);
  const at::Tensor mean = at::sum(x, dims, /*keepdim=*/true) / std::max<int64_t>(1, c10::multiply_integers(normalized_shape));
  const at::Tensor centred = x - mean;
  const at::Tensor variance = at::sum(centred * centred, dims, /*keepdim=*/true) / std::max<int64_t>(1, c10::multiply_integers(normalized_shape));
  const at::Tensor rstd = at::rsqrt(variance + eps);
  at::Tensor out = centred * rstd;
  if (weight && weight->defined()) out = out * weight->to(accumulate);
  if (bias && bias->defined()) out = out + bias->to(accumulate);
  const at::ScalarType statistics = input.is_cuda() ? accumulate : input.scalar_type();
  return {out.to(input.scalar_type()), mean.to(statistics), rstd.to(statistics)};
}
