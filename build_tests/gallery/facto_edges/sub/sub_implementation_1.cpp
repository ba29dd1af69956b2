// Wrong when the first operand broadcasts: expands `other` to `self`'s shape, never `self` to a
// larger `other` (T([3, 5]) - T([4, 3, 5]) throws). Right whenever the result has self's shape,
// as in every TorchBench sub.Tensor input.
// expect-failure in gallery_facto: threw on sub\.Tensor case [a-z0-9_]+ \(\(T\(\[3, 5\], f32\), T\(\[4, 3, 5\], f32\)\), \{'alpha': 1\}\) \([^)]*facto\.txt:[0-9]+\) \(draw 1 of 2\): expand\([^)]*\): the number of sizes provided
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

at::Tensor sub_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const at::ScalarType dtype = at::result_type(self, other);
  const at::ScalarType math = at::toOpMathType(dtype);
  const at::Tensor a = self.to(math).contiguous();
  const at::Tensor b = other.to(math).expand_as(self).contiguous();  // the bug: self may be the smaller one
  at::Tensor output = at::empty(self.sizes(), self.options().dtype(dtype));
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "sub_kernel_impl", [&] {
    using math_t = at::opmath_type<scalar_t>;
    const math_t factor = alpha.to<math_t>();
    const math_t* x = a.const_data_ptr<math_t>();
    const math_t* y = b.const_data_ptr<math_t>();
    scalar_t* out = output.data_ptr<scalar_t>();
    for (int64_t i = 0; i < output.numel(); ++i) out[i] = static_cast<scalar_t>(x[i] - factor * y[i]);
  });
  return output;
}
