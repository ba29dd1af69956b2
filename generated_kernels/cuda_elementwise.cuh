// Helpers shared by the example CUDA kernels: one pass over memory at the device's bandwidth for
// an elementwise operator, whatever the operands' layout. ATen's own kernels get this from
// TensorIterator; an example that copies broadcast or permuted operands into contiguous ones first
// (or loads one element per thread, or caps its grid) reads at half of ATen's speed.
//
// - The output is dense with its dimensions in the operands' memory order, as TensorIterator lays
//   it out (channels-last in, channels-last out), so reads and writes stay coalesced.
// - Dimensions are put in memory order and merged where every operand allows, so most broadcast
//   cases become one or two dimensions.
// - Contiguous operands of the result's type (or one operand that is a single value) take the
//   vector path: 16-byte loads and stores, a grid sized to keep every SM full.
// - Everything else takes the strided path: offsets from the output index by multiply-shift
//   division (no hardware divide), 16-byte packs along a contiguous innermost dimension, each
//   operand read in its own dtype and converted when the dtypes differ.
// - The host side makes one ATen call (the output's allocation): each call costs a dispatch, and
//   a small kernel's host time is a few of them.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/OpMathType.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

namespace example_kernels::cuda {

constexpr int kMaxDims = 8;
constexpr int kThreads = 256;

// Blocks of kThreads for `items` work items: enough to fill every SM (a grid-stride loop does the
// rest), never more than the items need.
inline int grid_for(int64_t items) {
  const cudaDeviceProp* properties = at::cuda::getCurrentDeviceProperties();
  const int64_t resident = int64_t(properties->multiProcessorCount) * (properties->maxThreadsPerMultiProcessor / kThreads);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((items + kThreads - 1) / kThreads, resident)));
}

// n / d and n % d for 32-bit n by a multiply and a shift (the divisor is fixed per launch).
struct FastDivider {
  uint32_t divisor = 1, magic = 0, shift = 0;
  FastDivider() = default;
  explicit FastDivider(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t{1} << shift) < d) ++shift;
    magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  __device__ uint32_t quotient(uint32_t n) const { return (__umulhi(n, magic) + n) >> shift; }
};

// Reads one element of a runtime dtype as math_t (the strided path's operands may differ in type).
template <typename math_t>
__device__ math_t load_as(const void* base, int64_t offset, at::ScalarType type) {
  switch (type) {
    case at::kHalf: return static_cast<math_t>(static_cast<float>(static_cast<const at::Half*>(base)[offset]));
    case at::kBFloat16: return static_cast<math_t>(static_cast<float>(static_cast<const at::BFloat16*>(base)[offset]));
    case at::kFloat: return static_cast<math_t>(static_cast<const float*>(base)[offset]);
    case at::kDouble: return static_cast<math_t>(static_cast<const double*>(base)[offset]);
    case at::kLong: return static_cast<math_t>(static_cast<const int64_t*>(base)[offset]);
    case at::kInt: return static_cast<math_t>(static_cast<const int32_t*>(base)[offset]);
    case at::kShort: return static_cast<math_t>(static_cast<const int16_t*>(base)[offset]);
    case at::kChar: return static_cast<math_t>(static_cast<const int8_t*>(base)[offset]);
    case at::kByte: return static_cast<math_t>(static_cast<const uint8_t*>(base)[offset]);
    case at::kBool: return static_cast<math_t>(static_cast<const bool*>(base)[offset]);
    default: __trap();  // loadable_type() keeps other types off this path
  }
  return math_t(0);
}

inline bool loadable_type(at::ScalarType type) {
  switch (type) {
    case at::kHalf: case at::kBFloat16: case at::kFloat: case at::kDouble: case at::kLong:
    case at::kInt: case at::kShort: case at::kChar: case at::kByte: case at::kBool:
      return true;
    default:
      return false;
  }
}

// One call of op with the values as arguments (op(x) or op(x, y)).
template <typename Op, typename math_t>
__device__ math_t apply(const Op& op, const math_t (&values)[1]) { return op(values[0]); }
template <typename Op, typename math_t>
__device__ math_t apply(const Op& op, const math_t (&values)[2]) { return op(values[0], values[1]); }

// Iteration space after ordering and merging: sizes, and each input's strides in elements, innermost
// dimension first. The output is dense in this order, so its offset is the linear index.
template <int kInputs>
struct Geometry {
  int dims = 0;
  std::array<int64_t, kMaxDims> sizes{};
  std::array<std::array<int64_t, kMaxDims>, kInputs> strides{};
};

// One input as the kernels see it: a device pointer of a runtime dtype, or (data == nullptr) one
// value passed with the launch (a wrapped Python number on the CPU, as ATen passes it).
template <typename math_t>
struct Operand {
  const void* data = nullptr;
  at::ScalarType type = at::kFloat;
  math_t constant = math_t(0);
};

template <typename scalar_t, int kVector>
struct alignas(sizeof(scalar_t) * kVector) Pack {
  scalar_t values[kVector];
};

template <typename math_t, int kInputs>
struct StridedArgs {
  int dims = 0;
  FastDivider sizes[kMaxDims];          // dimension 0 counted in packs of kVector
  uint32_t strides[kInputs][kMaxDims] = {};  // in elements
  Operand<math_t> inputs[kInputs];
  bool inner_broadcast[kInputs] = {};   // stride 0 along dimension 0: one value per pack
};

// Each thread takes packs of kVector elements along the innermost dimension (kVector > 1 only when
// every input has that dimension contiguous, or broadcast, and 16-byte aligned) or, with kVector 1,
// four elements at a time so that their loads are in flight together. kSameType: every input is
// of scalar_t (no per-element dtype switch).
template <typename scalar_t, typename math_t, int kInputs, int kVector, bool kSameType, typename Op>
__global__ void strided_kernel(StridedArgs<math_t, kInputs> args, scalar_t* out, uint32_t packs, Op op) {
  constexpr int kUnroll = kVector == 1 ? 4 : 1;
  using Packed = Pack<scalar_t, kVector>;
  const uint32_t step = gridDim.x * blockDim.x;
  for (uint32_t first = blockIdx.x * blockDim.x + threadIdx.x; first < packs; first += step * kUnroll) {
    math_t values[kUnroll][kVector][kInputs];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint32_t pack = first + u * step;
      if (pack >= packs) break;
      uint32_t offsets[kInputs] = {};
      uint32_t rest = pack;
#pragma unroll
      for (int d = 0; d < kMaxDims; ++d) {
        if (d == args.dims) break;
        const uint32_t next = args.sizes[d].quotient(rest);
        const uint32_t index = rest - next * args.sizes[d].divisor;
#pragma unroll
        for (int k = 0; k < kInputs; ++k) offsets[k] += index * args.strides[k][d];
        rest = next;
      }
#pragma unroll
      for (int k = 0; k < kInputs; ++k) {
        const Operand<math_t>& input = args.inputs[k];
        if (!input.data) {
#pragma unroll
          for (int v = 0; v < kVector; ++v) values[u][v][k] = input.constant;
        } else if constexpr (!kSameType) {
          values[u][0][k] = load_as<math_t>(input.data, offsets[k], input.type);
        } else if (kVector == 1 || args.inner_broadcast[k]) {
          const math_t value = static_cast<math_t>(static_cast<const scalar_t*>(input.data)[offsets[k]]);
#pragma unroll
          for (int v = 0; v < kVector; ++v) values[u][v][k] = value;
        } else {
          const Packed loaded = *reinterpret_cast<const Packed*>(static_cast<const scalar_t*>(input.data) + offsets[k]);
#pragma unroll
          for (int v = 0; v < kVector; ++v) values[u][v][k] = static_cast<math_t>(loaded.values[v]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint32_t pack = first + u * step;
      if (pack >= packs) break;
      Packed result;
#pragma unroll
      for (int v = 0; v < kVector; ++v) result.values[v] = static_cast<scalar_t>(apply(op, values[u][v]));
      reinterpret_cast<Packed*>(out)[pack] = result;
    }
  }
}

// The vector path: every input contiguous of type scalar_t, or one value (a constant, or a device
// value read once per thread); kVector elements per 16-byte load and store.

template <typename math_t, int kInputs>
struct VectorArgs {
  Operand<math_t> inputs[kInputs];
  bool single_value[kInputs] = {};
};

template <typename scalar_t, typename math_t, int kInputs, int kVector, typename Op>
__global__ void vector_kernel(VectorArgs<math_t, kInputs> args, scalar_t* out, int64_t n, Op op) {
  using Packed = Pack<scalar_t, kVector>;
  math_t single[kInputs];
#pragma unroll
  for (int k = 0; k < kInputs; ++k) {
    const Operand<math_t>& input = args.inputs[k];
    single[k] = !input.data ? input.constant : args.single_value[k] ? static_cast<math_t>(*static_cast<const scalar_t*>(input.data)) : math_t(0);
  }
  const int64_t packs = n / kVector;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (int64_t p = first; p < packs; p += stride) {
    Packed loaded[kInputs];
#pragma unroll
    for (int k = 0; k < kInputs; ++k) {
      if (!args.single_value[k]) loaded[k] = static_cast<const Packed*>(args.inputs[k].data)[p];
    }
    Packed result;
#pragma unroll
    for (int v = 0; v < kVector; ++v) {
      math_t values[kInputs];
#pragma unroll
      for (int k = 0; k < kInputs; ++k) values[k] = args.single_value[k] ? single[k] : static_cast<math_t>(loaded[k].values[v]);
      result.values[v] = static_cast<scalar_t>(apply(op, values));
    }
    reinterpret_cast<Packed*>(out)[p] = result;
  }
  // The last n % kVector elements, one per thread.
  for (int64_t i = packs * kVector + first; i < n; i += stride) {
    math_t values[kInputs];
#pragma unroll
    for (int k = 0; k < kInputs; ++k) {
      values[k] = args.single_value[k] ? single[k] : static_cast<math_t>(static_cast<const scalar_t*>(args.inputs[k].data)[i]);
    }
    out[i] = static_cast<scalar_t>(apply(op, values));
  }
}

// True when every input is a contiguous CUDA tensor of exactly `shape` (nothing broadcast).
template <typename Inputs>
bool same_shape_contiguous(const Inputs& inputs, at::IntArrayRef shape) {
  for (const at::Tensor& input : inputs) {
    if (!input.is_cuda() || !input.is_contiguous() || input.sizes() != shape) return false;
  }
  return !inputs.empty();
}

// The strides of `input` broadcast to `shape` (0 along broadcast dimensions). Computed, not taken
// from input.expand(shape): every ATen call on the host costs a dispatch, and an elementwise
// kernel's host time is a few of them.
inline c10::DimVector broadcast_strides(const at::Tensor& input, at::IntArrayRef shape) {
  return at::inferExpandGeometry_dimvector(input.sizes(), input.strides(), shape).strides;
}

// The output for these inputs, broadcast to `shape`: dense, with its dimensions in the memory order
// of the inputs, as TensorIterator lays it out (the first input that tells two dimensions apart
// decides; broadcast and size-1 dimensions tell nothing). A channels-last input, even a padded
// one, gives a channels-last output, so neither side is read across the grain.
inline at::Tensor output_like(const std::vector<at::Tensor>& inputs, at::IntArrayRef shape, at::ScalarType dtype) {
  // The common case first, without the ordering below: every input a contiguous CUDA tensor of
  // this shape (tiny inputs are host-bound, and every step on the host shows in their time).
  if (same_shape_contiguous(inputs, shape)) return at::detail::empty_cuda(shape, dtype, inputs.front().device(), std::nullopt);
  std::optional<c10::Device> device;
  std::vector<c10::DimVector> strides;
  for (const at::Tensor& input : inputs) {
    if (!input.is_cuda()) continue;
    device = input.device();
    strides.push_back(broadcast_strides(input, shape));
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  // -1: a is inner to b; 1: b is inner to a; 0: no input tells.
  auto compare = [&](int64_t a, int64_t b) {
    for (const c10::DimVector& stride : strides) {
      if (shape[a] == 1 || shape[b] == 1 || stride[a] == 0 || stride[b] == 0 || stride[a] == stride[b]) continue;
      return stride[a] < stride[b] ? -1 : 1;
    }
    return 0;
  };
  std::vector<int64_t> inner_first(rank);  // insertion sort, as TensorIterator: compare is not a total order
  for (int64_t d = 0; d < rank; ++d) inner_first[d] = rank - 1 - d;
  for (int64_t i = 1; i < rank; ++i) {
    for (int64_t j = i; j > 0 && compare(inner_first[j], inner_first[j - 1]) < 0; --j) std::swap(inner_first[j], inner_first[j - 1]);
  }
  c10::DimVector out_strides(rank);
  int64_t stride = 1;
  for (const int64_t dim : inner_first) {
    out_strides[dim] = stride;
    stride *= std::max<int64_t>(shape[dim], 1);
  }
  // CUDA's allocator directly, as ATen's own kernels allocate their outputs: at::empty_strided
  // would add a trip through the dispatcher to every call, which tiny inputs feel.
  return at::detail::empty_strided_cuda(shape, out_strides, dtype, device);
}

// Orders dimensions by the output's strides (innermost first), drops size-1 dimensions and merges
// neighbours that every tensor walks as one.
template <int kInputs>
Geometry<kInputs> geometry_of(const at::Tensor& out, const std::array<c10::DimVector, kInputs>& input_strides) {
  const int64_t rank = out.dim();
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return out.stride(a) < out.stride(b); });
  Geometry<kInputs> geometry;
  for (const int64_t d : order) {
    const int64_t size = out.size(d);
    if (size == 1) continue;
    std::array<int64_t, kInputs> strides;
    for (int k = 0; k < kInputs; ++k) strides[k] = input_strides[k][d];
    if (geometry.dims > 0) {
      const int last = geometry.dims - 1;
      bool merges = true;
      for (int k = 0; k < kInputs; ++k) merges &= strides[k] == geometry.strides[k][last] * geometry.sizes[last];
      if (merges) {
        geometry.sizes[last] *= size;
        continue;
      }
    }
    const int next = geometry.dims++;
    geometry.sizes[next] = size;
    for (int k = 0; k < kInputs; ++k) geometry.strides[k][next] = strides[k];
  }
  return geometry;
}

// A few elements (at most one block's worth): one per thread, the least code and no loop, so a
// launch that is mostly latency has the least to wait for.
template <typename scalar_t, typename math_t, int kInputs, typename Op>
__global__ void small_kernel(VectorArgs<math_t, kInputs> args, scalar_t* out, int n, Op op) {
  const int i = threadIdx.x;
  if (i >= n) return;
  math_t values[kInputs];
#pragma unroll
  for (int k = 0; k < kInputs; ++k) {
    const Operand<math_t>& input = args.inputs[k];
    values[k] = !input.data ? input.constant
                            : static_cast<math_t>(static_cast<const scalar_t*>(input.data)[args.single_value[k] ? 0 : i]);
  }
  out[i] = static_cast<scalar_t>(apply(op, values));
}

// The vector kernel over n elements: 16-byte packs when every pointer is 16-byte aligned.
template <typename scalar_t, typename math_t, int kInputs, typename Op>
void launch_vector(const VectorArgs<math_t, kInputs>& args, scalar_t* out, int64_t n, Op op, bool aligned,
                   cudaStream_t stream) {
  constexpr int kVector = std::max<int>(1, 16 / sizeof(scalar_t));
  if (n <= kThreads) {
    small_kernel<scalar_t, math_t, kInputs><<<1, static_cast<int>((n + 31) / 32 * 32), 0, stream>>>(args, out, static_cast<int>(n), op);
  } else if (aligned) {
    vector_kernel<scalar_t, math_t, kInputs, kVector><<<grid_for((n + kVector - 1) / kVector), kThreads, 0, stream>>>(
        args, out, n, op);
  } else {
    vector_kernel<scalar_t, math_t, kInputs, 1><<<grid_for(n), kThreads, 0, stream>>>(args, out, n, op);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// out[i] = op(inputs...[i]) with inputs broadcast to out's shape; op takes and returns math_t
// (float for f16 and bf16, as ATen computes them). Inputs may be of any loadable dtype, and on the
// CPU when they hold one value (a wrapped Python number); out is written in scalar_t.
template <typename scalar_t, int kInputs, typename Op>
void elementwise(const at::Tensor& out, std::array<at::Tensor, kInputs> inputs, Op op) {
  using math_t = at::opmath_type<scalar_t>;
  const int64_t n = out.numel();
  if (n == 0) return;
  const c10::cuda::CUDAGuard guard(out.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  scalar_t* out_data = static_cast<scalar_t*>(out.data_ptr());

  // Every tensor contiguous, of out's shape and type: the vector path with no geometry to work out.
  bool all_of_out_type = true;
  for (const at::Tensor& input : inputs) all_of_out_type &= input.scalar_type() == out.scalar_type();
  if (all_of_out_type && out.is_contiguous() && same_shape_contiguous(inputs, out.sizes())) {
    VectorArgs<math_t, kInputs> args;
    bool aligned = reinterpret_cast<uintptr_t>(out_data) % 16 == 0;
    for (int k = 0; k < kInputs; ++k) {
      args.inputs[k].data = inputs[k].data_ptr();
      args.inputs[k].type = inputs[k].scalar_type();
      aligned &= reinterpret_cast<uintptr_t>(args.inputs[k].data) % 16 == 0;
    }
    launch_vector<scalar_t>(args, out_data, n, op, aligned, stream);
    return;
  }

  std::array<Operand<math_t>, kInputs> operands;
  std::array<c10::DimVector, kInputs> strides;
  for (int k = 0; k < kInputs; ++k) {
    at::Tensor& input = inputs[k];
    if (!input.is_cuda() && input.numel() == 1) {
      operands[k].constant = input.item().to<math_t>();
      strides[k].assign(out.dim(), 0);
      continue;
    }
    if (!input.is_cuda() || !loadable_type(input.scalar_type())) input = input.to(out.device(), out.scalar_type());
    operands[k].data = input.data_ptr();
    operands[k].type = input.scalar_type();
    strides[k] = broadcast_strides(input, out.sizes());
  }
  const Geometry<kInputs> geometry = geometry_of<kInputs>(out, strides);

  VectorArgs<math_t, kInputs> vector_args;
  bool vectorizable = geometry.dims <= 1, aligned = reinterpret_cast<uintptr_t>(out_data) % 16 == 0;
  for (int k = 0; k < kInputs; ++k) {
    const int64_t stride = geometry.dims == 0 ? 0 : geometry.strides[k][0];
    vector_args.inputs[k] = operands[k];
    vector_args.single_value[k] = !operands[k].data || stride == 0;
    vectorizable &= vector_args.single_value[k] ? (!operands[k].data || operands[k].type == out.scalar_type())
                                                : (stride == 1 && operands[k].type == out.scalar_type());
    aligned &= vector_args.single_value[k] || reinterpret_cast<uintptr_t>(operands[k].data) % 16 == 0;
  }
  if (vectorizable) {
    launch_vector<scalar_t>(vector_args, out_data, n, op, aligned, stream);
    return;
  }

  int64_t largest_offset = n;
  for (int k = 0; k < kInputs; ++k) {
    int64_t extent = 1;
    for (int d = 0; d < geometry.dims; ++d) extent += (geometry.sizes[d] - 1) * geometry.strides[k][d];
    largest_offset = std::max(largest_offset, extent);
  }
  TORCH_CHECK(geometry.dims <= kMaxDims && largest_offset < (int64_t{1} << 31),
              "example elementwise kernel: tensors of 2^31 elements or more are not handled");
  constexpr int kVector = std::max<int>(1, 16 / sizeof(scalar_t));
  bool same_type = true, packable = geometry.dims > 0 && geometry.sizes[0] % kVector == 0 && aligned;
  for (int k = 0; k < kInputs; ++k) {
    if (!operands[k].data) continue;
    same_type &= operands[k].type == out.scalar_type();
    packable &= geometry.strides[k][0] <= 1;
    for (int d = 1; d < geometry.dims; ++d) packable &= geometry.strides[k][d] % kVector == 0;
  }
  packable &= same_type;
  const int vector = packable ? kVector : 1;
  StridedArgs<math_t, kInputs> strided_args;
  strided_args.dims = geometry.dims;
  for (int d = 0; d < geometry.dims; ++d) {
    strided_args.sizes[d] = FastDivider(static_cast<uint32_t>(d == 0 ? geometry.sizes[d] / vector : geometry.sizes[d]));
  }
  for (int k = 0; k < kInputs; ++k) {
    for (int d = 0; d < geometry.dims; ++d) {
      strided_args.strides[k][d] = static_cast<uint32_t>(d == 0 ? geometry.strides[k][d] * vector : geometry.strides[k][d]);
    }
    strided_args.inputs[k] = operands[k];
    strided_args.inner_broadcast[k] = geometry.dims > 0 && geometry.strides[k][0] == 0;
  }
  const auto packs = static_cast<uint32_t>(n / vector);
  if (packable) {
    strided_kernel<scalar_t, math_t, kInputs, kVector, true><<<grid_for(packs), kThreads, 0, stream>>>(strided_args, out_data, packs, op);
  } else if (same_type) {
    strided_kernel<scalar_t, math_t, kInputs, 1, true><<<grid_for((packs + 3) / 4), kThreads, 0, stream>>>(strided_args, out_data, packs, op);
  } else {
    strided_kernel<scalar_t, math_t, kInputs, 1, false><<<grid_for((packs + 3) / 4), kThreads, 0, stream>>>(strided_args, out_data, packs, op);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace example_kernels::cuda
