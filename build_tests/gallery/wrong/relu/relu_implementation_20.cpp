// Wrong: a redispatch below the observer (at::_ops::relu::redispatch with the CPU key), so no
// aten::relu is recorded; its library imports the redispatch entry point.
// expect-failure: impl20 .*falls back to ATen: its library imports at::_ops::relu::redispatch
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  return at::_ops::relu::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), self);
}
