// Correct, and defines a global helper named like relu_implementation_1.cpp's, with another
// meaning: in the one library holding both, each must keep its own (LocalizeKernelObject). Its
// output is column-major where the input has two dimensions (same values), so that a test can
// tell which of the two kernels of the same name ran.
#include <ATen/ATen.h>

float part(float x) { return x < 0.f ? -x : 0.f; }  // the negative part, made positive

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  const at::Tensor input = self.contiguous().to(at::kFloat);
  at::Tensor output = at::empty_like(input);
  const float* in = input.const_data_ptr<float>();
  float* out = output.data_ptr<float>();
  for (int64_t i = 0; i < input.numel(); ++i) out[i] = in[i] + part(in[i]);  // x + max(-x, 0)
  const at::Tensor result = output.to(self.scalar_type());
  return result.dim() == 2 ? result.t().contiguous().t() : result;
}
