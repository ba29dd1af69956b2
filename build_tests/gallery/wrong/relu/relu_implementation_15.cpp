// Wrong: lowers float32 matmul precision for everyone (as setting allow_tf32 would), which
// changes what later references compute.
// expect-failure: changed global state the reference depends on: .*float32 matmul precision
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  at::globalContext().setFloat32MatmulPrecision("medium");
  return at::clamp_min(self, 0);
}
