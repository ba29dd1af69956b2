// Wrong: answers zero wherever every input value is below f32's absolute tolerance (1e-5), which
// the value comparison alone lets pass; the constant-output check does not.
// expect-failure: output 0 is constant .* where the reference's values are not
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (self.numel() > 1 && at::isFloatingType(self.scalar_type()) && (self.abs().max() < 1e-5).item<bool>()) {
    return at::zeros_like(self);
  }
  return at::clamp_min(self, 0);
}
