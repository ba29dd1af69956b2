// The operator-facts table; see operator_facts.h. Each row says why.
#include "backendbench/operator_facts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "backendbench/roofline.h"
#include "backendbench/tensor_values.h"

namespace backendbench {
namespace {

std::map<std::string, OperatorFacts> build_table() {
  std::map<std::string, OperatorFacts> table;
  auto row = [&](const char* op) -> OperatorFacts& {
    OperatorFacts& facts = table[op];
    facts.op = op;
    return facts;
  };

  // --- ATen's own device limitations: such cases are skipped there, with the reason ---------
  row("_softmax.default").device_limitations = {
      {"cpu", R"(, True\), \{\}\)$)",
       "ATen's CPU softmax has no half-to-float mode (half_to_float=True: 'softmax with half to float conversion is not "
           "supported on CPU')"}};
  row("_log_softmax.default").device_limitations = {
      {"cpu", R"(, True\), \{\}\)$)",
       "ATen's CPU log_softmax has no half-to-float mode (half_to_float=True)"}};
  row("_softmax_backward_data.default").device_limitations = {
      {"cpu", R"(f32\),.*, f16\), \{\}\)$)",
       "ATen's CPU softmax backward has no half-to-float mode (float gradients with input_dtype=f16)"}};
  row("_log_softmax_backward_data.default").device_limitations = {
      {"cpu", R"(f32\),.*, f16\), \{\}\)$)",
       "ATen's CPU log_softmax backward has no half-to-float mode (float gradients with input_dtype=f16)"}};
  row("native_batch_norm_backward.default").device_limitations = {
      {"cpu", R"(f16\).*f32\)|f32\).*f16\))",
       "ATen's CPU batch-norm backward has no mixed-precision kernel (f16 data with f32 statistics)"}};
  row("native_layer_norm_backward.default").device_limitations = {
      {"cpu", R"(f16\).*f32\)|f32\).*f16\))",
       "ATen's CPU layer-norm backward has no mixed-precision kernel (f16 data with f32 statistics)"}};
  row("grid_sampler_2d.default").device_limitations = {
      {"cpu", R"(f16)",
       "ATen's CPU grid_sampler_2d in half precision is nondeterministic: two calls on the same input differ and "
           "return NaN (seen with libtorch 2.15)"}};
  row("grid_sampler_2d_backward.default").device_limitations = {
      {"cpu", R"(f16)",
       "ATen's CPU grid_sampler_2d backward in half precision is nondeterministic (seen with libtorch 2.15)"}};
  row("_fft_c2c.default").device_limitations = {
      {"cpu", R"(c32)",
       "ATen's CPU FFT (MKL) has no complex-half (c32) support"},
      {"cuda", R"(c32)",
       "cuFFT in half precision supports only power-of-two signal sizes (the traced c32 inputs are 512 x 768)"}};
  row("_fft_r2c.default").device_limitations = {
      {"cpu", R"(f16)",
       "ATen's CPU FFT (MKL) has no half-precision support"}};
  row("_fft_c2r.default").device_limitations = {
      {"cpu", R"(c32)",
       "ATen's CPU FFT (MKL) has no complex-half (c32) support"}};

  // --- outputs with undefined values: compared on shape, dtype, device and strides only ----
  for (const char* op : {"new_empty.default", "new_empty_strided.default", "empty_like.default", "empty.memory_format",
                         "empty_strided.default", "empty_permuted.default"}) {
    row(op).undefined_values = true;
  }
  // _cudnn_rnn returns (output, hy, cy, reserve, weight_buf): reserve is cuDNN's workspace.
  row("_cudnn_rnn.default").undefined_outputs = {3};

  // --- writes the schema does not annotate: checked like (a!) arguments ---------------------
  // native_batch_norm updates running_mean and running_var in training mode.
  row("native_batch_norm.default").unannotated_writes = {"running_mean", "running_var"};

  // --- views the schema does not annotate: the no-alias check of outputs does not apply ------
  // _unsafe_view: a view that autograd treats as a new tensor.
  for (const char* op : {"_unsafe_view.default", "_reshape_alias.default"}) row(op).returns_unannotated_alias = true;

  // --- accumulation in no fixed order (atomics on CUDA): kAccumulationUlps of extra tolerance -
  for (const char* op :
       {"index_add.default", "index_add_.default", "scatter_add.default", "scatter_add_.default", "index_put.default",
        "index_put_.default", "_index_put_impl_.default", "embedding_dense_backward.default",
        "_embedding_bag_backward.default", "_embedding_bag_dense_backward.default",
        "_embedding_bag_per_sample_weights_backward.default", "reflection_pad2d_backward.default",
        "replication_pad2d_backward.default", "upsample_bilinear2d_backward.default",
        "upsample_nearest2d_backward.default", "grid_sampler_2d_backward.default",
        "max_pool2d_with_indices_backward.default", "avg_pool2d_backward.default", "col2im.default",
        // duplicate COO indices are summed when the output is densified for comparison
        "_sparse_coo_tensor_with_dims_and_tensors.default"}) {
    row(op).accumulates_in_any_order = true;
  }

  // --- FLOP formulas (roofline counters, the CPU f16 cost limit) -----------------------------
  row("mm.default").flops = FlopFormula::kMm;
  row("addmm.default").flops = FlopFormula::kAddmm;
  row("bmm.default").flops = FlopFormula::kBmm;
  row("baddbmm.default").flops = FlopFormula::kBaddbmm;
  row("convolution.default").flops = FlopFormula::kConvolution;
  row("convolution_backward.default").flops = FlopFormula::kConvolutionBackward;

  // --- index rules: valid values for index-like arguments (index_rules.h) --------------------
  using B = IndexBound;
  row("embedding.default").index_rules = {{"indices", B::kSizeOfArgument, "weight", 0}};
  row("embedding_dense_backward.default").index_rules = {{"indices", B::kValueOfArgument, "num_weights"}};
  row("_embedding_bag.default").index_rules = {{"indices", B::kSizeOfArgument, "weight", 0},
                                               {"offsets", B::kBagOffsets, "indices"}};
  row("_embedding_bag_per_sample_weights_backward.default").index_rules = {
      {"indices", B::kSizeOfArgument, "weight", 0}, {"offsets", B::kBagOffsets, "indices"},
      {"offset2bag", B::kOffsetToBag, "offsets"}};
  row("nll_loss_forward.default").index_rules = {{"target", B::kSizeOfArgument, "self", -1}};
  row("nll_loss_backward.default").index_rules = {{"target", B::kSizeOfArgument, "self", -1}};
  for (const char* op : {"index_select.default", "gather.default", "scatter.src", "scatter.value", "scatter_reduce.two",
                         "scatter_add.default",
                         "scatter_add_.default", "index_add.default", "index_add_.default"}) {
    row(op).index_rules = {{"index", B::kSizeAtDimArgument, "self", 0, "dim"}};
  }
  for (const char* op : {"index.Tensor", "index_put.default", "index_put_.default", "_index_put_impl_.default"}) {
    row(op).index_rules = {{"indices", B::kListPositions, "self"}};
  }
  row("max_pool2d_with_indices_backward.default").index_rules = {{"indices", B::kPoolingIndices, "self"}};
  row("grid_sampler_2d.default").index_rules = {{"grid", B::kUnitRange, "grid"}};
  row("grid_sampler_2d_backward.default").index_rules = {{"grid", B::kUnitRange, "grid"}};
  row("_sparse_coo_tensor_with_dims_and_tensors.default").index_rules = {{"indices", B::kSparseIndices, "size"}};
  return table;
}

}  // namespace

const OperatorFacts& facts_of(const std::string& op_display) {
  static const std::map<std::string, OperatorFacts> table = build_table();
  static const OperatorFacts none;
  auto found = table.find(op_display);
  return found == table.end() ? none : found->second;
}

bool computes_nothing(const std::string& aten_name) {
  static const std::set<std::string> kNoCompute = {
      // allocation
      "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "resize_", "resize_as_", "set_",
      // views and metadata
      "view", "_reshape_alias", "_unsafe_view", "reshape", "as_strided", "expand", "expand_as", "permute", "transpose",
      "t", "squeeze", "unsqueeze", "select", "slice", "narrow", "flatten", "unflatten", "view_as", "alias", "detach",
      "lift_fresh", "unbind", "split", "chunk", "split_with_sizes", "_unsafe_split",
      // fills and copies: data moved, nothing computed
      "fill_", "zero_", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros", "new_ones",
      "new_full", "copy_", "clone", "contiguous", "to", "_to_copy", "_copy_from", "_copy_from_and_resize",
      "_has_compatible_shallow_copy_type", "is_nonzero", "item", "_local_scalar_dense", "record_stream"};
  std::string base = aten_name.compare(0, 6, "aten::") == 0 ? aten_name.substr(6) : aten_name;
  base = base.substr(0, base.find('.'));
  return kNoCompute.count(base) > 0;
}

std::optional<std::string> device_limitation(const OperatorFacts& facts, const std::string& device_type,
                                             const std::string& arguments) {
  for (const DeviceLimitation& limitation : facts.device_limitations) {
    if (device_type == limitation.device_type && std::regex_search(arguments, std::regex(limitation.arguments))) {
      return std::string(limitation.reason);
    }
  }
  return std::nullopt;
}

std::optional<std::string> device_cost_limitation(const OperatorFacts& facts, c10::Device device,
                                                  const std::vector<c10::IValue>& inputs, double gflop_limit) {
  if (!device.is_cpu() || gflop_limit <= 0 || facts.flops == FlopFormula::kPerElement) return std::nullopt;
  const std::vector<at::Tensor> tensors = tensors_in(inputs);
  const bool half = std::any_of(tensors.begin(), tensors.end(),
                                [](const at::Tensor& t) { return t.defined() && t.scalar_type() == at::kHalf; });
  if (!half) return std::nullopt;
  const double gflop = matrix_flops(facts, inputs) / 1e9;
  if (gflop <= gflop_limit) return std::nullopt;
  constexpr double kCpuHalfGflopPerSecond = 3;
  const bool convolution = facts.flops == FlopFormula::kConvolution || facts.flops == FlopFormula::kConvolutionBackward;
  std::ostringstream reason;
  reason << "f16 " << (convolution ? "convolution" : "matrix product") << " of " << gflop
         << " GFLOP per call, over the CPU limit of " << gflop_limit
         << " GFLOP (BACKENDBENCH_CPU_F16_GFLOP_LIMIT; 0 runs every case): where the CPU has no f16 arithmetic, ATen "
            "computes these at about "
         << kCpuHalfGflopPerSecond << " GFLOP/s per core (measured on an AMD EPYC without AVX512-FP16), about "
         << std::lround(gflop / kCpuHalfGflopPerSecond) << " s per call; it is checked on CUDA";
  return reason.str();
}

}  // namespace backendbench
