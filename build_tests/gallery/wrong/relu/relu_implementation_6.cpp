// Wrong: never returns. Its kernel worker is stopped at the case timeout and the case fails, naming it.
// expect-failure: impl6 .* threw on relu\.default .*the kernel worker failed: it did not answer within the case timeout
#include <ATen/ATen.h>

#include <chrono>
#include <thread>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  return self;
}
