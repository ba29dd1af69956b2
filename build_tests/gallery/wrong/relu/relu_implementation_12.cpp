// Wrong: returns its input itself when relu would not change it, so the caller's output and
// input share memory (relu returns a new tensor: its schema has no alias annotation).
// expect-failure: output 0 shares memory with argument 'self'
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  at::Tensor output = at::clamp_min(self, 0);
  if (self.is_contiguous() && at::equal(output, self)) return self;
  return output;
}
