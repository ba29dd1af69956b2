// Control: an honest relu (generated_kernels/relu/relu_implementation_2.cu); must pass.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/cuda/CUDAContext.h>

namespace {

template <typename scalar_t>
__global__ void relu_cuda(const scalar_t* in, scalar_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    using math_t = at::opmath_type<scalar_t>;  // compare half types as float
    const math_t value = static_cast<math_t>(in[i]);
    out[i] = value < math_t(0) ? scalar_t(0) : in[i];  // NaN stays NaN
  }
}

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  TORCH_CHECK(self.is_cuda(), "relu_implementation_3 runs on CUDA tensors");
  const at::Tensor input = self.contiguous();
  at::Tensor output = at::empty(input.sizes(), input.options());
  const int64_t n = input.numel();
  if (n == 0) return output;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "relu_cuda", [&] {
    relu_cuda<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return output;
}
