// Wrong on a negative dim: wraps it one short (dim -1 of a rank-2 tensor becomes 0, not 1), so it
// reduces the wrong dim. Right on every non-negative dim, as in TorchBench's max.dim input.
// expect-failure in gallery_facto: max\.dim case [a-z0-9_]+ \(\(T\(\[3, 5\], f32\), -1, False\), \{\}\) \([^)]*facto\.txt:[0-9]+\) \(draw 1 of 2\): output 0
#include <ATen/ATen.h>

#include <tuple>

std::tuple<at::Tensor, at::Tensor> max__dim_kernel_impl(const at::Tensor& self, int64_t dim, bool keepdim) {
  if (dim < 0) dim += self.dim() - 1;  // the bug: wrapping adds the rank, not the rank - 1
  if (self.dim() == 0) dim = 0;
  // argmax has no bool kernel; the first true is the first largest byte.
  const at::Tensor keys = self.scalar_type() == at::kBool ? self.to(at::kByte) : self;
  return {at::amax(self, {dim}, keepdim), at::argmax(keys, dim, keepdim)};
}
