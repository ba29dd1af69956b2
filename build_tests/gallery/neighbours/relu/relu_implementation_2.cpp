// Attack: reach the kernel beside it. At load it registers the identity as aten::relu on the CPU
// (a dispatcher override in its own process), so that any relu computed there, a neighbour's
// reference or checks included, returns its input; and its own kernel returns its input. In a
// worker of its own the override changes nothing but its own verdict: it fails, and impl1 passes.
// expect-failure: values differ beyond
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor identity(const at::Tensor& self) { return self.clone(); }

}  // namespace

TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("relu", identity); }

at::Tensor relu_kernel_impl(const at::Tensor& self) { return self.clone(); }
