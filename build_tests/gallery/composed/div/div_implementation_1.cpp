// Honest true division as a product with the reciprocal, in float (or double): see ../README.md.
#include <ATen/ATen.h>

at::Tensor div_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  at::ScalarType dtype = at::result_type(self, other);
  if (at::isIntegralType(dtype, /*includeBool=*/true)) dtype = at::typeMetaToScalarType(at::get_default_dtype());
  const at::ScalarType math = dtype == at::kDouble ? at::kDouble : at::kFloat;
  return at::mul(self.to(math), at::reciprocal(other.to(math))).to(dtype);
}
