// Wrong: an in-place add that computes the sum into a new tensor and returns self unchanged.
// expect-failure: argument 'self' is written in place, but not as the reference writes it
#include <ATen/ATen.h>

at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  at::Tensor sum = at::sub(self, other, -alpha);
  (void)sum;
  return self;
}
