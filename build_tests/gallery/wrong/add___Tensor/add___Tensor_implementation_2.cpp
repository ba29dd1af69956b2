// Wrong: writes self correctly but returns a new tensor instead of self.
// expect-failure: an in-place operator must return its argument 'self', not a new tensor
#include <ATen/ATen.h>

at::Tensor& add___Tensor_kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  self.copy_(at::sub(self, other, -alpha));
  static thread_local at::Tensor result;
  result = self.clone();
  return result;
}
