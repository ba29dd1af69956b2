// Wrong: returns the values flattened to one dimension.
// expect-failure: shape \[[0-9]+\], expected \[
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0).reshape({-1}); }
