// Honest true division by a number as a product with its reciprocal, in float (or double): see
// ../README.md.
#include <ATen/ATen.h>

at::Tensor div__Scalar_kernel_impl(const at::Tensor& self, const at::Scalar& other) {
  at::ScalarType dtype = at::result_type(self, other);
  if (at::isIntegralType(dtype, /*includeBool=*/true)) dtype = at::typeMetaToScalarType(at::get_default_dtype());
  const at::ScalarType math = dtype == at::kDouble ? at::kDouble : at::kFloat;
  return at::mul(self.to(math), 1.0 / other.toDouble()).to(dtype);
}
