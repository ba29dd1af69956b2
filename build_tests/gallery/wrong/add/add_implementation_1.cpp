// Wrong: ignores alpha (self + other), right whenever alpha is 1, as in most traces.
// expect-failure: 'alpha': 2.*values differ beyond
#include <ATen/ATen.h>

at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return at::sub(self, other, -1);
}
