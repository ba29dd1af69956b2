// Honest: impl3's relu without its L2 set-aside and window: the figures impl3's may be at most.
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0); }
