// Wrong: ATen's own CPU add (at::cpu::add): nothing is dispatched at all, and the library imports it.
// expect-failure: impl2 .*falls back to ATen: its library imports at::cpu::add\(at::Tensor const&, at::Tensor const&, c10::Scalar const&\)
#include <ATen/ATen.h>
#include <ATen/CPUFunctions.h>

at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return at::cpu::add(self, other, alpha);
}
