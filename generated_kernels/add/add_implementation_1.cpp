// add.Tensor on the CPU: self + alpha * other with broadcasting and type promotion (bool too: the
// FACTO suite found it missing).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include "elementwise.h"

at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  TORCH_CHECK(self.device().is_cpu(), "add_implementation_1 runs on CPU tensors");
  const at::ScalarType dtype = at::result_type(self, other);
  const auto [a, b] = example_kernels::opmath_operands(self, other, dtype);
  at::Tensor output = at::empty(a.sizes(), a.options().dtype(dtype));
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, dtype, "add_kernel_impl", [&] {
    using math_t = at::opmath_type<scalar_t>;
    const math_t factor = alpha.to<math_t>();
    const math_t* x = a.data_ptr<math_t>();
    const math_t* y = b.data_ptr<math_t>();
    scalar_t* out = output.data_ptr<scalar_t>();
    const int64_t n = output.numel();  // hoisted: lets the compiler vectorise the loop
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<scalar_t>(x[i] + factor * y[i]);
    }
  });
  return output;
}
