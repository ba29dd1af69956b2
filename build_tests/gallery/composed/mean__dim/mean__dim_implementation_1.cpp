// Honest mean over dimensions as a sum divided by the count: see ../README.md.
#include <ATen/ATen.h>

at::Tensor mean__dim_kernel_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                 std::optional<at::ScalarType> dtype) {
  const at::ScalarType out = dtype.value_or(self.scalar_type());
  int64_t count = 1;
  if (dim.has_value() && !dim->empty()) {
    for (const int64_t d : *dim) count *= self.size(d);
  } else {
    count = self.numel();
  }
  const at::Tensor sum = at::sum(self.to(at::kFloat), dim, keepdim);
  return (sum / static_cast<double>(count)).to(out);
}
