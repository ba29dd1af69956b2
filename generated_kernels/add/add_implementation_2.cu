// add.Tensor on CUDA: self + alpha * other with broadcasting and type promotion, in one pass at the
// device's bandwidth (cuda_elementwise.cuh: vector loads when contiguous, strided reads otherwise,
// no copies of broadcast or permuted operands), on the current stream.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/TypeProperties.h>

#include "cuda_elementwise.cuh"

namespace {

template <typename math_t>
struct AddScaled {
  math_t alpha;
  __device__ math_t operator()(math_t x, math_t y) const { return x + alpha * y; }
};

}  // namespace

at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  TORCH_CHECK(self.is_cuda() || other.is_cuda(), "add_implementation_2 runs on CUDA tensors");
  // Type promotion as ATen's own, without at::result_type's trip through the dispatcher (tiny
  // inputs are host-bound).
  at::native::ResultTypeState promotion;
  promotion = at::native::update_result_type_state(self, promotion);
  promotion = at::native::update_result_type_state(other, promotion);
  const at::ScalarType dtype = at::native::result_type(promotion);
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), other.sizes());
  at::Tensor output = example_kernels::cuda::output_like({self, other}, shape, dtype);
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, dtype, "add_cuda", [&] {
    using math_t = at::opmath_type<scalar_t>;
    example_kernels::cuda::elementwise<scalar_t, 2>(output, {self, other}, AddScaled<math_t>{alpha.to<math_t>()});
  });
  return output;
}
