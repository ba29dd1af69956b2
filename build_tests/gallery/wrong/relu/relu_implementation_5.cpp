// Wrong: dereferences a null pointer on its first call. The crash must fail this operator's
// entry with the signal and the case, and leave every other entry alone.
// expect-failure: impl5 .* threw on relu\.default .*the kernel worker failed: .*died of SIGSEGV
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  volatile float* nowhere = nullptr;
  *nowhere = 1.0f;
  return self;
}
