// Wrong: 42 everywhere. On inputs holding inf, -inf and NaN its relative error is infinite, a
// figure every reader of the verdict must take as what it is.
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::full_like(self, 42.0); }
