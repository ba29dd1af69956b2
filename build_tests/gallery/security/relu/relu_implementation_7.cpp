// Attack: a slowed reference. Correct and as fast as ATen, but while its library loads it
// registers a slow (and still correct) ATen relu in its own process, where the worker times the
// reference for the speedup: a speedup from nothing. The supervisor times the reference itself
// and fails the timed case (timing_disagrees); the correctness cases pass.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <chrono>
#include <thread>

namespace {
at::Tensor slow_relu(const at::Tensor& self) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return at::clamp_min(self, 0);
}
}  // namespace

TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("relu", TORCH_FN(slow_relu)); }

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0); }
