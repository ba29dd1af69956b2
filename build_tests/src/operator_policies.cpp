// Operator policies; see operator_policies.h. Each row says why.
#include "backendbench/operator_policies.h"

#include <regex>
#include <set>
#include <vector>

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

bool has_undefined_values(const std::string& op_display) {
  static const std::set<std::string> kUndefinedValues = {
      "new_empty.default", "new_empty_strided.default", "empty_like.default", "empty.memory_format",
      "empty_strided.default"};
  return kUndefinedValues.count(op_display) > 0;
}

}  // namespace backendbench
