// Wrong: reads its input as if it were contiguous; right on contiguous inputs only.
// expect-failure: values differ beyond
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  at::Tensor output = at::empty(self.sizes(), self.options());
  if (self.scalar_type() != at::kFloat) return at::clamp_min(self, 0);
  const float* in = self.const_data_ptr<float>();  // ignores strides
  float* out = output.data_ptr<float>();
  for (int64_t i = 0; i < self.numel(); ++i) out[i] = in[i] < 0 ? 0 : in[i];
  return output;
}
