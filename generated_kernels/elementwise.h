// Helpers shared by the example CPU kernels: broadcasting and type promotion done up front,
// so each kernel is a plain loop over contiguous buffers. (Kernels may include helpers from
// generated_kernels/; the folder is on the include path of every kernel.)
#pragma once

#include <ATen/ATen.h>

#include <utility>

namespace example_kernels {

// Both operands broadcast to one shape, converted to `dtype` and made contiguous.
inline std::pair<at::Tensor, at::Tensor> broadcast_operands(const at::Tensor& self, const at::Tensor& other,
                                                            at::ScalarType dtype) {
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), other.sizes());
  // A wrapped Python number arrives as a 0-dim CPU tensor: it moves to self's device.
  return {self.to(dtype).expand(shape).contiguous(), other.to(self.device(), dtype).expand(shape).contiguous()};
}

}  // namespace example_kernels
