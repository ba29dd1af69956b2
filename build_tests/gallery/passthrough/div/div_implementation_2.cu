// Passthrough on CUDA: ATen's own div through the backend's registration path (CUDA key).
#include <ATen/ATen.h>

at::Tensor div_kernel_impl(const at::Tensor& self, const at::Tensor& other) { return at::div(self, other); }
