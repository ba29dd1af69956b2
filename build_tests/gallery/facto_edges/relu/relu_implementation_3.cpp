// Wrong on a 0-dim input: works on rows (the first dim, the rest flattened), and a 0-dim tensor
// has no first dim, so it throws. Right on every input with a dim, empty ones included (smoke,
// TorchBench).
// expect-failure in gallery_facto: threw on relu\.default case [a-z0-9_]+ \(\(T\(\[\], f32\),\), \{\}\) \([^)]*facto\.txt:[0-9]+\) \(draw 1 of 2\): Dimension specified as 0 but tensor has no dimensions
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  const int64_t count = self.size(0);  // the bug: a 0-dim tensor has no dim 0
  const at::Tensor rows = self.reshape({count, count == 0 ? 0 : self.numel() / count});
  return at::clamp_min(rows, 0).reshape(self.sizes());
}
