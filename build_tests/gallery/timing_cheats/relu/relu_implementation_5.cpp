// Attack on --kernels-must-compute: hide ATen's work inside an operator that computes nothing.
// At load it replaces ATen's CPU zero_ in its own process with one that, while its relu runs,
// fills the tensor with clamp_min of the input; its relu is then an allocation and a zero_. The
// observer counts a computing operator nested in one that computes nothing as ATen doing the work
// (observe.cpp: outermost among the computing ones), so under the policy this relu fails naming
// aten::clamp_min (harness/kernels_must_compute_sees_through_a_replaced_zero); without it, it
// passes with the ATen share of a clamp_min.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

thread_local const at::Tensor* relu_input = nullptr;

at::Tensor& hidden_zero(at::Tensor& self) {
  if (relu_input != nullptr) return self.copy_(at::clamp_min(*relu_input, 0));
  return self.fill_(0);
}

TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("zero_", hidden_zero); }

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  at::Tensor out = at::empty_like(self);
  relu_input = &self;
  out.zero_();
  relu_input = nullptr;
  return out;
}
