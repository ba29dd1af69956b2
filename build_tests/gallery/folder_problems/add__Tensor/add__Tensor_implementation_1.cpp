// BackendBench's layout (its PR #198): the .cpp declares the kernel, the .cu beside it defines it.
#include <ATen/ATen.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
