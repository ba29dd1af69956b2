// Helpers shared by the example CPU kernels: broadcasting and type promotion done up front,
// so each kernel is a plain loop over contiguous buffers. (Kernels may include helpers from
// generated_kernels/; the folder is on the include path of every kernel.)
#pragma once

#include <ATen/ATen.h>
#include <ATen/OpMathType.h>

#include <utility>

namespace example_kernels {

// Both operands broadcast to one shape, converted to `dtype` and made contiguous.
inline std::pair<at::Tensor, at::Tensor> broadcast_operands(const at::Tensor& self, const at::Tensor& other,
                                                            at::ScalarType dtype) {
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), other.sizes());
  // A wrapped Python number arrives as a 0-dim CPU tensor: it moves to self's device.
  return {self.to(dtype).expand(shape).contiguous(), other.to(self.device(), dtype).expand(shape).contiguous()};
}

// The same, converted to the type ATen computes `dtype` in (float for f16 and bf16): a wrapped
// Python number then keeps its float value, as in ATen (0.177 rounded to f16 first would move
// some products by an ulp), and the loop needs no conversion.
inline std::pair<at::Tensor, at::Tensor> opmath_operands(const at::Tensor& self, const at::Tensor& other,
                                                         at::ScalarType dtype) {
  return broadcast_operands(self, other, at::toOpMathType(dtype));
}

}  // namespace example_kernels
