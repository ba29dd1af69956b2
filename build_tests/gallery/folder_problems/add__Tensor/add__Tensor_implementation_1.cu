// The CUDA definition of BackendBench's pair (see the .cpp of the same name).
#include <ATen/ATen.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return self + other * alpha.toDouble();
}
