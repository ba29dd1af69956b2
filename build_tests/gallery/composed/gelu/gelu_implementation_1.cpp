// Honest gelu from erf or tanh, in float: see ../README.md.
#include <ATen/ATen.h>

#include <cmath>

at::Tensor gelu_kernel_impl(const at::Tensor& self, c10::string_view approximate) {
  const at::Tensor x = self.to(at::kFloat);
  at::Tensor inner;
  if (approximate == "tanh") {
    inner = at::tanh((x + x * x * x * 0.044715) * std::sqrt(2.0 / M_PI));
  } else {
    inner = at::erf(x * M_SQRT1_2);
  }
  return (x * 0.5 * (inner + 1)).to(self.scalar_type());
}
