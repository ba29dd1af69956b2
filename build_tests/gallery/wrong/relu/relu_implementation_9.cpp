// Wrong: zeroes NaN (where(x > 0, x, 0) is false for NaN); ATen's relu keeps NaN.
// expect-failure: expected nan, got 0
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::where(self > 0, self, at::zeros_like(self)); }
