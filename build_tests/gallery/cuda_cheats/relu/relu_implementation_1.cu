// Cheat: computes on a side stream and returns before the work is done, so CUDA events on the
// current stream time almost nothing.
// The sample suite's only f32 case is [4, 8], whose side-stream work is within the check's noise
// (its other case is f16, computed honestly): that suite's entry passes.
// expect-failure in smoke: work left on another stream after it returned
// expect-failure in edge: work left on another stream after it returned
// expect-failure in torchbench: work left on another stream after it returned
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>

namespace {
__global__ void relu_slowly(const float* in, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float value = in[i];
    for (int k = 0; k < 2048; ++k) value = value * 1.0000001f - value * 0.0000001f;  // busy work
    out[i] = (in[i] < 0.f ? 0.f : in[i]) + (value == 12345.678f ? 1.f : 0.f);  // keeps the loop
  }
}
}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (self.scalar_type() != at::kFloat) return at::clamp_min(self, 0);
  const at::Tensor input = self.contiguous();
  at::Tensor output = at::empty(input.sizes(), input.options());
  const int64_t n = input.numel();
  if (n == 0) return output;
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  // The side stream waits for the inputs, but nobody waits for the side stream.
  at::cuda::CUDAEvent ready;
  ready.record(at::cuda::getCurrentCUDAStream());
  ready.block(side);
  relu_slowly<<<static_cast<int>(std::min<int64_t>((n + 255) / 256, 65535)), 256, 0, side>>>(
      input.data_ptr<float>(), output.data_ptr<float>(), n);
  return output;
}
