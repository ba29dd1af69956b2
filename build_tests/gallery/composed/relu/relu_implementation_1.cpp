// Honest relu of another operator (clamp_min): see ../README.md.
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0); }
