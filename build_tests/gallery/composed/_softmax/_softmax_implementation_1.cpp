// Honest softmax of its steps (max, exp, sum, divide): see ../README.md.
#include <ATen/ATen.h>

at::Tensor _softmax_kernel_impl(const at::Tensor& self, int64_t dim, bool half_to_float) {
  const at::ScalarType out = half_to_float ? at::kFloat : self.scalar_type();
  const at::Tensor x = self.to(at::kFloat);
  const at::Tensor shifted = at::exp(x - std::get<0>(at::max(x, dim, /*keepdim=*/true)));
  return (shifted / at::sum(shifted, dim, /*keepdim=*/true)).to(out);
}
