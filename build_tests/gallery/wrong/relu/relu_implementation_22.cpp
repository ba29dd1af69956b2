// Wrong: the operator found in the dispatcher by its name and redispatched below the observer
// (Dispatcher::redispatch records nothing), so that neither the worker's observer nor the
// library's imports show it; the operator's name is in its library, which the supervisor reads.
// expect-failure: impl22 .*falls back to ATen: its library names aten::relu
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  static const auto relu =
      c10::Dispatcher::singleton().findSchemaOrThrow("aten::relu", "").typed<at::Tensor(const at::Tensor&)>();
  return relu.redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), self);
}
