// Honest: the same relu as the cheats beside it compute, with nothing forged: its figures are
// what theirs may be at most.
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0); }
