// Wrong: ATen's own CPU relu, called past the dispatcher (at::cpu::relu): the worker's observer
// sees no aten::relu, but the kernel's library imports it, which the supervisor reads.
// expect-failure: impl19 .*falls back to ATen: its library imports at::cpu::relu\(at::Tensor const&\)
#include <ATen/ATen.h>
#include <ATen/CPUFunctions.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::cpu::relu(self); }
