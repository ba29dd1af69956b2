// Wrong: computes in f32 and forgets to cast back, so f16 and bf16 inputs get f32 outputs.
// expect-failure: dtype Float, expected (Half|BFloat16)
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (at::isFloatingType(self.scalar_type())) return at::clamp_min(self.to(at::kFloat), 0);
  return at::clamp_min(self, 0);
}
