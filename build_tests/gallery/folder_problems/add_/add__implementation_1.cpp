// An agent's in-place add in a folder named add_: add_ has no default overload, so the folder
// names no operator (add___Tensor would name add_.Tensor).
#include <ATen/ATen.h>

at::Tensor& add__kernel_impl(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return self.add_(other, alpha);
}
