// div.Tensor on the CPU: true division (integer inputs give the default float dtype),
// with broadcasting and type promotion.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include "elementwise.h"

at::Tensor div_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device().is_cpu(), "div_implementation_1 runs on CPU tensors");
  at::ScalarType dtype = at::result_type(self, other);
  if (at::isIntegralType(dtype, /*includeBool=*/true)) dtype = at::typeMetaToScalarType(at::get_default_dtype());
  const auto [a, b] = example_kernels::opmath_operands(self, other, dtype);
  at::Tensor output = at::empty(a.sizes(), a.options().dtype(dtype));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "div_kernel_impl", [&] {
    using math_t = at::opmath_type<scalar_t>;
    const math_t* x = a.data_ptr<math_t>();
    const math_t* y = b.data_ptr<math_t>();
    scalar_t* out = output.data_ptr<scalar_t>();
    const int64_t n = output.numel();  // hoisted: lets the compiler vectorise the loop
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<scalar_t>(x[i] / y[i]);
    }
  });
  return output;
}
