// Wrong: throws for the dtypes it does not handle.
// expect-failure: impl11 .* threw on relu\.default case .*only float32 is implemented
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() == at::kFloat, "only float32 is implemented");
  return at::clamp_min(self, 0);
}
