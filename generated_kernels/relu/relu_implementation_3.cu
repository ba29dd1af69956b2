// relu.default on CUDA: max(x, 0) in one pass at the device's bandwidth (16-byte loads and stores
// where the data is aligned), on the current stream.
//
// A two-part kernel (README, "Two-part CUDA kernels"): the device part, under
// BACKENDBENCH_DEVICE_PART, is compiled by nvcc without ATen's headers (about 1 s); the host
// function below it is compiled as C++ against the kernels' precompiled header. relu_implementation_2.cu
// is a classic one-part .cu, which nvcc compiles whole with ATen's headers: 30-40 s.
#include <cstdint>

// The one call between the two parts: relu of `count` elements of `dtype` (a DType) from `input`
// to `output`, both dense, on `stream`. Returns the launch's error.
enum class DType : int { kFloat, kDouble, kHalf, kBFloat16, kInt8, kUInt8, kInt16, kInt32, kInt64 };

#ifdef BACKENDBENCH_DEVICE_PART

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

template <typename T>
__device__ __forceinline__ T relu_of(T x) {
  return x < T(0) ? T(0) : x;  // NaN stays NaN
}
__device__ __forceinline__ __half relu_of(__half x) { return __hlt(x, __float2half(0.f)) ? __float2half(0.f) : x; }
__device__ __forceinline__ __nv_bfloat16 relu_of(__nv_bfloat16 x) {
  return __hlt(x, __float2bfloat16(0.f)) ? __float2bfloat16(0.f) : x;
}
__device__ __forceinline__ uint8_t relu_of(uint8_t x) { return x; }

// Each thread one 16-byte pack when both pointers are 16-byte aligned, else one element.
template <typename T, int kPack>
__global__ void relu_kernel(const T* __restrict__ input, T* __restrict__ output, int64_t count) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kPack;
  if (first + kPack <= count) {
    struct alignas(sizeof(T) * kPack) Pack {
      T value[kPack];
    };
    Pack pack = *reinterpret_cast<const Pack*>(input + first);
#pragma unroll
    for (int i = 0; i < kPack; ++i) pack.value[i] = relu_of(pack.value[i]);
    *reinterpret_cast<Pack*>(output + first) = pack;
  } else {
    for (int64_t i = first; i < count; ++i) output[i] = relu_of(input[i]);
  }
}

template <typename T>
cudaError_t launch(const void* input, void* output, int64_t count, cudaStream_t stream) {
  constexpr int kPack = 16 / sizeof(T);
  constexpr int kThreads = 256;
  const bool aligned = reinterpret_cast<uintptr_t>(input) % 16 == 0 && reinterpret_cast<uintptr_t>(output) % 16 == 0;
  const int64_t per_thread = aligned ? kPack : 1;
  const int64_t blocks = (count + per_thread * kThreads - 1) / (per_thread * kThreads);
  if (aligned) {
    relu_kernel<T, kPack><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(input), static_cast<T*>(output), count);
  } else {
    relu_kernel<T, 1><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(input), static_cast<T*>(output), count);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t relu_launch(DType dtype, const void* input, void* output, int64_t count, cudaStream_t stream) {
  switch (dtype) {
    case DType::kFloat: return launch<float>(input, output, count, stream);
    case DType::kDouble: return launch<double>(input, output, count, stream);
    case DType::kHalf: return launch<__half>(input, output, count, stream);
    case DType::kBFloat16: return launch<__nv_bfloat16>(input, output, count, stream);
    case DType::kInt8: return launch<int8_t>(input, output, count, stream);
    case DType::kUInt8: return launch<uint8_t>(input, output, count, stream);
    case DType::kInt16: return launch<int16_t>(input, output, count, stream);
    case DType::kInt32: return launch<int32_t>(input, output, count, stream);
    case DType::kInt64: return launch<int64_t>(input, output, count, stream);
  }
  return cudaErrorInvalidValue;
}

#else  // the host part: C++, with ATen

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t relu_launch(DType dtype, const void* input, void* output, int64_t count, cudaStream_t stream);

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  TORCH_CHECK(self.is_cuda(), "relu_implementation_3 runs on CUDA tensors");
  DType dtype;
  switch (self.scalar_type()) {
    case at::kFloat: dtype = DType::kFloat; break;
    case at::kDouble: dtype = DType::kDouble; break;
    case at::kHalf: dtype = DType::kHalf; break;
    case at::kBFloat16: dtype = DType::kBFloat16; break;
    case at::kChar: dtype = DType::kInt8; break;
    case at::kByte: dtype = DType::kUInt8; break;
    case at::kShort: dtype = DType::kInt16; break;
    case at::kInt: dtype = DType::kInt32; break;
    case at::kLong: dtype = DType::kInt64; break;
    default: TORCH_CHECK(false, "\"relu_cuda\" not implemented for '", self.scalar_type(), "'");
  }
  const c10::cuda::CUDAGuard guard(self.device());
  // A dense tensor (contiguous, or any permutation of it) is relu'd over its storage, and its
  // output has its strides (empty_like keeps a dense layout); any other view is made contiguous.
  const at::Tensor input = self.is_non_overlapping_and_dense() ? self : self.contiguous();
  at::Tensor output = at::empty_like(input);
  if (input.numel() > 0) {
    C10_CUDA_CHECK(relu_launch(dtype, input.const_data_ptr(), output.mutable_data_ptr(), input.numel(),
                               c10::cuda::getCurrentCUDAStream()));
  }
  return output;
}

#endif
