// Honest sigmoid of three launches, in float: see ../README.md.
#include <ATen/ATen.h>

at::Tensor sigmoid_kernel_impl(const at::Tensor& self) {
  return at::reciprocal(at::exp(-self.to(at::kFloat)) + 1).to(self.scalar_type());
}
