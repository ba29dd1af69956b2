// Wrong: right output, but it clamps its read-only input in place on the way.
// expect-failure: argument 'self' is read-only in the schema but the kernel changed it
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  at::Tensor input = self;
  input.clamp_min_(0);  // writes the caller's tensor
  return input.clone();
}
