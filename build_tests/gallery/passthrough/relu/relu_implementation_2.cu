// Passthrough on CUDA: ATen's own relu through the backend's registration path, on the CUDA key,
// to measure what the path costs on the GPU (the .cpp passthroughs cover the CPU key).
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::relu(self); }
