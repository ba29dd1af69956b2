// Attack: reference poisoning. While its library loads, it registers its own (wrong) function as
// ATen's CPU kernel of relu, so that a reference computed in its process agrees with it. The
// reference is computed by the supervisor, which never loads kernel code: it fails.
// expect-failure: (values differ beyond|is constant)
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {
at::Tensor poisoned_relu(const at::Tensor& self) { return at::zeros_like(self); }
}  // namespace

TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("relu", TORCH_FN(poisoned_relu)); }

at::Tensor relu_kernel_impl(const at::Tensor& self) { return poisoned_relu(self); }
