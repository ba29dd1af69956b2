// Operator policies; see operator_policies.h. Each row says why.
#include "backendbench/operator_policies.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "backendbench/harness.h"
#include "backendbench/roofline.h"

namespace backendbench {
namespace {

struct DeviceLimitation {
  const char* op;
  const char* device_type;
  const char* arguments;  // ECMAScript regex over the canonical argument text
  const char* reason;
};

const std::vector<DeviceLimitation>& device_limitations() {
  static const std::vector<DeviceLimitation> limitations = {
      {"_softmax.default", "cpu", R"(, True\), \{\}\)$)",
       "ATen's CPU softmax has no half-to-float mode (half_to_float=True: 'softmax with half to float conversion is not "
       "supported on CPU')"},
      {"_log_softmax.default", "cpu", R"(, True\), \{\}\)$)",
       "ATen's CPU log_softmax has no half-to-float mode (half_to_float=True)"},
      {"_softmax_backward_data.default", "cpu", R"(f32\),.*, f16\), \{\}\)$)",
       "ATen's CPU softmax backward has no half-to-float mode (float gradients with input_dtype=f16)"},
      {"_log_softmax_backward_data.default", "cpu", R"(f32\),.*, f16\), \{\}\)$)",
       "ATen's CPU log_softmax backward has no half-to-float mode (float gradients with input_dtype=f16)"},
      {"native_batch_norm_backward.default", "cpu", R"(f16\).*f32\)|f32\).*f16\))",
       "ATen's CPU batch-norm backward has no mixed-precision kernel (f16 data with f32 statistics)"},
      {"native_layer_norm_backward.default", "cpu", R"(f16\).*f32\)|f32\).*f16\))",
       "ATen's CPU layer-norm backward has no mixed-precision kernel (f16 data with f32 statistics)"},
      {"grid_sampler_2d.default", "cpu", R"(f16)",
       "ATen's CPU grid_sampler_2d in half precision is nondeterministic: two calls on the same input differ and "
       "return NaN (seen with libtorch 2.15)"},
      {"grid_sampler_2d_backward.default", "cpu", R"(f16)",
       "ATen's CPU grid_sampler_2d backward in half precision is nondeterministic (seen with libtorch 2.15)"},
      {"_fft_c2c.default", "cpu", R"(c32)", "ATen's CPU FFT (MKL) has no complex-half (c32) support"},
      {"_fft_c2c.default", "cuda", R"(c32)",
       "cuFFT in half precision supports only power-of-two signal sizes (the traced c32 inputs are 512 x 768)"},
      {"_fft_r2c.default", "cpu", R"(f16)", "ATen's CPU FFT (MKL) has no half-precision support"},
      {"_fft_c2r.default", "cpu", R"(c32)", "ATen's CPU FFT (MKL) has no complex-half (c32) support"},
  };
  return limitations;
}

}  // namespace

std::optional<std::string> device_limitation(const std::string& op_display, const std::string& device_type,
                                             const std::string& arguments) {
  for (const DeviceLimitation& limitation : device_limitations()) {
    if (op_display == limitation.op && device_type == limitation.device_type &&
        std::regex_search(arguments, std::regex(limitation.arguments))) {
      return std::string(limitation.reason);
    }
  }
  return std::nullopt;
}

std::optional<std::string> device_cost_limitation(const std::string& op_display, c10::Device device,
                                                  const std::vector<c10::IValue>& inputs) {
  if (!device.is_cpu()) return std::nullopt;
  const std::vector<at::Tensor> tensors = tensors_in(inputs);
  const bool half = std::any_of(tensors.begin(), tensors.end(),
                                [](const at::Tensor& t) { return t.defined() && t.scalar_type() == at::kHalf; });
  if (!half) return std::nullopt;
  const char* configured = std::getenv("BACKENDBENCH_CPU_F16_GFLOP_LIMIT");
  const double limit = configured ? std::atof(configured) : kCpuHalfGflopLimit;
  const double gflop = matrix_flops(op_display, inputs) / 1e9;  // 0 for any operator but GEMMs and convolutions
  if (limit <= 0 || gflop <= limit) return std::nullopt;
  constexpr double kCpuHalfGflopPerSecond = 3;
  std::ostringstream reason;
  reason << "f16 " << (op_display.rfind("convolution", 0) == 0 ? "convolution" : "matrix product") << " of " << gflop
         << " GFLOP per call, over the CPU limit of " << limit
         << " GFLOP (BACKENDBENCH_CPU_F16_GFLOP_LIMIT; 0 runs every case): where the CPU has no f16 arithmetic, ATen "
            "computes these at about "
         << kCpuHalfGflopPerSecond << " GFLOP/s per core (measured on an AMD EPYC without AVX512-FP16), about "
         << std::lround(gflop / kCpuHalfGflopPerSecond) << " s per call; it is checked on CUDA";
  return reason.str();
}

std::vector<size_t> undefined_outputs(const std::string& op_display) {
  // _cudnn_rnn returns (output, hy, cy, reserve, weight_buf): reserve is cuDNN's workspace.
  if (op_display == "_cudnn_rnn.default") return {3};
  return {};
}

std::vector<std::string> unannotated_writes(const std::string& op_display) {
  if (op_display == "native_batch_norm.default") return {"running_mean", "running_var"};
  return {};
}

bool returns_unannotated_alias(const std::string& op_display) {
  static const std::set<std::string> kAliasing = {"_unsafe_view.default", "_reshape_alias.default"};
  return kAliasing.count(op_display) > 0;
}

bool accumulates_in_any_order(const std::string& op_display) {
  static const std::set<std::string> kAccumulating = {
      "index_add.default", "index_add_.default", "scatter_add.default", "scatter_add_.default",
      "index_put.default", "index_put_.default", "_index_put_impl_.default", "embedding_dense_backward.default",
      "_embedding_bag_backward.default", "_embedding_bag_dense_backward.default",
      "_embedding_bag_per_sample_weights_backward.default", "reflection_pad2d_backward.default",
      "replication_pad2d_backward.default", "upsample_bilinear2d_backward.default",
      "upsample_nearest2d_backward.default", "grid_sampler_2d_backward.default",
      "max_pool2d_with_indices_backward.default", "avg_pool2d_backward.default", "col2im.default",
      // duplicate COO indices are summed when the output is densified for comparison
      "_sparse_coo_tensor_with_dims_and_tensors.default"};
  return kAccumulating.count(op_display) > 0;
}

bool has_undefined_values(const std::string& op_display) {
  static const std::set<std::string> kUndefinedValues = {
      "new_empty.default", "new_empty_strided.default", "empty_like.default", "empty.memory_format",
      "empty_strided.default", "empty_permuted.default"};
  return kUndefinedValues.count(op_display) > 0;
}

}  // namespace backendbench
