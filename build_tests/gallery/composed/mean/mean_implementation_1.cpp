// Honest mean as a sum divided by the count: see ../README.md.
#include <ATen/ATen.h>

at::Tensor mean_kernel_impl(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  const at::ScalarType out = dtype.value_or(self.scalar_type());
  return (at::sum(self, at::kFloat) / static_cast<double>(self.numel())).to(out);
}
