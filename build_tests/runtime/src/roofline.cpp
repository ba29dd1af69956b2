// Bytes and FLOPs per case, and device peaks; see roofline.h.
#include "backendbench/roofline.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>

#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
#define BACKENDBENCH_HAS_CUDA_RUNTIME 1
#endif

#include "backendbench/tensor_values.h"
#include "language/syntax.h"

namespace backendbench {
namespace {

// Elements a tensor's view reaches in memory: zero strides (broadcast) read one element.
double touched_elements(const at::Tensor& tensor) {
  if (tensor.numel() == 0) return 0;
  if (tensor.layout() != at::kStrided) return static_cast<double>(tensor._nnz());
  const int64_t extent = parse::storage_extent(tensor.sizes().vec(), tensor.strides().vec()).value_or(tensor.numel());
  return static_cast<double>(std::min(extent, tensor.numel()));
}

double matmul_flops(FlopFormula formula, const std::vector<c10::IValue>& inputs) {
  auto size = [&](size_t argument, int64_t dim) { return static_cast<double>(inputs.at(argument).toTensor().size(dim)); };
  switch (formula) {
    case FlopFormula::kMm: return 2 * size(0, 0) * size(0, 1) * size(1, 1);
    case FlopFormula::kAddmm: return 2 * size(1, 0) * size(1, 1) * size(2, 1);
    case FlopFormula::kBmm: return 2 * size(0, 0) * size(0, 1) * size(0, 2) * size(1, 2);
    case FlopFormula::kBaddbmm: return 2 * size(1, 0) * size(1, 1) * size(1, 2) * size(2, 2);
    default: return 0;
  }
}

// Elements of a convolution's output, from its arguments (input, weight, bias, stride,
// padding, dilation, transposed, ...): the usual size formula per spatial dimension.
double convolution_output_elements(const std::vector<c10::IValue>& inputs) {
  const at::Tensor& input = inputs.at(0).toTensor();
  const at::Tensor& weight = inputs.at(1).toTensor();
  const std::vector<int64_t> stride = inputs.at(3).toIntVector(), padding = inputs.at(4).toIntVector(),
                             dilation = inputs.at(5).toIntVector();
  auto at_dim = [](const std::vector<int64_t>& values, size_t d) { return values.size() == 1 ? values[0] : values.at(d); };
  double elements = static_cast<double>(input.size(0) * weight.size(0));
  for (int64_t d = 2; d < input.dim(); ++d) {
    const size_t s = static_cast<size_t>(d - 2);
    const int64_t extent = input.size(d) + 2 * at_dim(padding, s) - at_dim(dilation, s) * (weight.size(d) - 1) - 1;
    elements *= static_cast<double>(std::max<int64_t>(0, extent / at_dim(stride, s) + 1));
  }
  return elements;
}

// 2 × multiply-adds: each element of the larger activation side meets weight.numel()/weight.size(0) weights.
double convolution_flops(FlopFormula formula, const std::vector<c10::IValue>& inputs) {
  if (formula == FlopFormula::kConvolution) {
    const at::Tensor& input = inputs.at(0).toTensor();
    const at::Tensor& weight = inputs.at(1).toTensor();
    const bool transposed = inputs.at(6).toBool();
    const double per_element = static_cast<double>(weight.numel() / weight.size(0));
    const double elements = transposed ? static_cast<double>(input.numel()) : convolution_output_elements(inputs);
    return 2 * elements * per_element;
  }
  if (formula == FlopFormula::kConvolutionBackward) {
    // (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask)
    const at::Tensor& grad_output = inputs.at(0).toTensor();
    const at::Tensor& weight = inputs.at(2).toTensor();
    const double one = 2 * static_cast<double>(grad_output.numel()) * static_cast<double>(weight.numel() / weight.size(0));
    const std::vector<bool> mask = {inputs.at(10).toBoolList().get(0), inputs.at(10).toBoolList().get(1)};
    return one * ((mask[0] ? 1 : 0) + (mask[1] ? 1 : 0));
  }
  return 0;
}

}  // namespace

double matrix_flops(const OperatorFacts& facts, const std::vector<c10::IValue>& inputs) {
  try {
    return matmul_flops(facts.flops, inputs) + convolution_flops(facts.flops, inputs);
  } catch (const std::exception&) {
    return 0;  // an argument not of the expected form
  }
}

Work work_of(const OperatorFacts& facts, const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& outputs) {
  Work work;
  double input_elements = 0, output_elements = 0;
  bool dtype_found = false;
  for (const at::Tensor& tensor : tensors_in(inputs)) {
    if (!tensor.defined()) continue;
    work.bytes += touched_elements(tensor) * static_cast<double>(tensor.element_size());
    input_elements = std::max(input_elements, static_cast<double>(tensor.numel()));
    if (!dtype_found && at::isFloatingType(tensor.scalar_type())) {
      work.dtype = tensor.scalar_type();
      dtype_found = true;
    }
  }
  for (const at::Tensor& tensor : tensors_in(outputs)) {
    if (!tensor.defined()) continue;
    work.bytes += static_cast<double>(tensor.numel()) * static_cast<double>(tensor.element_size());
    output_elements = std::max(output_elements, static_cast<double>(tensor.numel()));
  }
  work.flops = matrix_flops(facts, inputs);
  if (work.flops == 0) work.flops = std::max(input_elements, output_elements);
  return work;
}

Peaks peaks_for_device_name(const std::string& name, at::ScalarType dtype) {
  struct Entry {
    const char* name;
    double tb_per_second, tensor_tflops, f32_tflops;
  };
  // Vendor datasheets (SXM parts): HBM bandwidth, dense f16/bf16 tensor-core and plain f32 peaks.
  static const std::vector<Entry> kTable = {
      {"H200", 4.8, 989.5, 66.9}, {"H100", 3.35, 989.5, 66.9}, {"A100", 2.039, 312, 19.5}};
  for (const Entry& entry : kTable) {
    if (name.find(entry.name) == std::string::npos) continue;
    const bool tensor_core = dtype == at::kHalf || dtype == at::kBFloat16;
    return {entry.tb_per_second * 1e12, (tensor_core ? entry.tensor_tflops : entry.f32_tflops) * 1e12,
            std::string("table: ") + entry.name};
  }
  return {};
}

Peaks device_peaks(c10::Device device, at::ScalarType dtype, const Settings& settings) {
  Peaks peaks;
#ifdef BACKENDBENCH_HAS_CUDA_RUNTIME
  if (device.is_cuda()) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, device.index() < 0 ? 0 : device.index()) == cudaSuccess) {
      peaks = peaks_for_device_name(properties.name, dtype);
    }
  }
#endif
  if (settings.peak_gbps > 0) {
    peaks.bytes_per_second = settings.peak_gbps * 1e9;
    peaks.source = "BACKENDBENCH_PEAK_*";
  }
  if (settings.peak_tflops > 0) {
    peaks.flops_per_second = settings.peak_tflops * 1e12;
    peaks.source = "BACKENDBENCH_PEAK_*";
  }
  return peaks;
}

}  // namespace backendbench
