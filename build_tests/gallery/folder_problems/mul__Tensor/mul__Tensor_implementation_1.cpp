// A kernel file that holds no kernel: a helper, and nothing named mul__Tensor_kernel_impl.
#include <ATen/ATen.h>

at::Tensor multiply_elements(const at::Tensor& a, const at::Tensor& b) { return a * b; }
