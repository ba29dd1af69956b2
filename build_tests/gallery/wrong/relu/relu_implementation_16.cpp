// Wrong: returns before its work is done, leaving a thread to fill the output later.
// expect-failure: left 1 thread\(s\) running after it returned
#include <ATen/ATen.h>

#include <chrono>
#include <thread>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  at::Tensor input = self.clone();
  at::Tensor output = at::zeros_like(self);
  std::thread([input, output]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    output.copy_(at::clamp_min(input, 0));
  }).detach();
  return output;
}
