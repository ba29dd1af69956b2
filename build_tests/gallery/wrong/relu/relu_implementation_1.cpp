// Wrong: identity "relu". Passes an all-positive draw; negative values must catch it.
// expect-failure: values differ beyond rtol=.*expected 0, got -
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return self.clone(); }
