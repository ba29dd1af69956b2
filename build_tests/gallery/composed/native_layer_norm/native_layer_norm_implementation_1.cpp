// Honest layer norm of its steps (mean, variance, scale, shift), in float: see ../README.md.
#include <ATen/ATen.h>
#include <ATen/AccumulateType.h>

#include <tuple>
#include <vector>

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_kernel_impl(const at::Tensor& input,
                                                                            at::IntArrayRef normalized_shape,
                                                                            const std::optional<at::Tensor>& weight,
                                                                            const std::optional<at::Tensor>& bias,
                                                                            double eps) {
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - static_cast<int64_t>(normalized_shape.size()); d < input.dim(); ++d) dims.push_back(d);
  const at::Tensor x = input.to(at::kFloat);
  const at::Tensor mean = at::mean(x, dims, /*keepdim=*/true);
  const at::Tensor centred = x - mean;
  const at::Tensor rstd = at::rsqrt(at::mean(centred * centred, dims, /*keepdim=*/true) + eps);
  at::Tensor out = centred * rstd;
  if (weight.has_value() && weight->defined()) out = out * weight->to(at::kFloat);
  if (bias.has_value() && bias->defined()) out = out + bias->to(at::kFloat);
  // ATen's statistics are of the accumulation type on CUDA (float for half), the input's on a CPU.
  const at::ScalarType statistics =
      input.is_cuda() ? at::toAccumulateType(input.scalar_type(), /*is_cuda=*/true) : input.scalar_type();
  return {out.to(input.scalar_type()), mean.to(statistics), rstd.to(statistics)};
}
