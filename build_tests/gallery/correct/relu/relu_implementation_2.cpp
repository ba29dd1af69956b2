// Correct, written differently from ATen: relu as maximum(x, 0), which also propagates NaN.
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::maximum(self, at::zeros({}, self.options())); }
