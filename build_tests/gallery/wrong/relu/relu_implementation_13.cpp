// Wrong: aborts (a failed assert in release code, std::terminate, ...). Like a segfault, the
// abort must fail this operator's entry naming the signal and the case.
// expect-failure: impl13 .* threw on relu\.default .*the kernel worker failed: .*died of SIGABRT
#include <ATen/ATen.h>

#include <cstdlib>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (self.numel() > 0) std::abort();
  return at::clamp_min(self, 0);
}
