// Correct, written differently from ATen: the sum computed out of place, then copied into self.
#include <ATen/ATen.h>

at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  self.copy_(at::sub(self, other, -alpha));
  return self;
}
