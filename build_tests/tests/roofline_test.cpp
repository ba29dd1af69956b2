// Unit tests of roofline.h: bytes, FLOPs and peaks.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/operator_facts.h"
#include "backendbench/roofline.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

TEST(Roofline, BytesAndFlops) {
  const std::vector<c10::IValue> mm_inputs = {at::empty({64, 32}, at::kHalf), at::empty({32, 16}, at::kHalf)};
  const Work mm = work_of(facts_of("mm.default"), mm_inputs, {at::empty({64, 16}, at::kHalf)});
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 64 * 32 * 16);
  EXPECT_DOUBLE_EQ(mm.bytes, 2.0 * (64 * 32 + 32 * 16 + 64 * 16));
  EXPECT_EQ(mm.dtype, at::kHalf);
  // Elementwise: one operation per element; a broadcast (zero-stride) input is read once.
  const at::Tensor row = at::empty({1, 8}).expand({4, 8});
  const Work add = work_of(facts_of("add.Tensor"), {at::empty({4, 8}), row, 1}, {at::empty({4, 8})});
  EXPECT_DOUBLE_EQ(add.flops, 32);
  EXPECT_DOUBLE_EQ(add.bytes, 4.0 * (32 + 8 + 32));
}

TEST(Roofline, ConvolutionFlopsFromTheInputsAlone) {
  // Stride, padding and dilation differ per dimension; groups 2: each output meets 4/2 × 3 × 2 weights.
  const at::Tensor input = at::randn({2, 4, 11, 9}), weight = at::randn({6, 2, 3, 2});
  const std::vector<c10::IValue> arguments = {input, weight, c10::IValue(), std::vector<int64_t>{2, 1},
                                              std::vector<int64_t>{1, 0}, std::vector<int64_t>{1, 2},
                                              false, std::vector<int64_t>{0, 0}, 2};
  const at::Tensor output = at::convolution(input, weight, {}, {2, 1}, {1, 0}, {1, 2}, false, {0, 0}, 2);
  EXPECT_DOUBLE_EQ(matrix_flops(facts_of("convolution.default"), arguments), 2.0 * output.numel() * 2 * 3 * 2);
  std::vector<c10::IValue> transposed = arguments;
  transposed[1] = at::randn({4, 3, 3, 2});
  transposed[6] = true;
  EXPECT_DOUBLE_EQ(matrix_flops(facts_of("convolution.default"), transposed), 2.0 * input.numel() * 3 * 3 * 2);
  EXPECT_EQ(matrix_flops(facts_of("relu.default"), {input}), 0);
}

TEST(Roofline, PeaksOfKnownDevices) {
  const Peaks h200 = peaks_for_device_name("NVIDIA H200", at::kBFloat16);
  EXPECT_DOUBLE_EQ(h200.bytes_per_second, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.flops_per_second, 989.5e12);
  EXPECT_LT(peaks_for_device_name("NVIDIA H200", at::kFloat).flops_per_second, h200.flops_per_second);
  EXPECT_EQ(peaks_for_device_name("Some CPU", at::kFloat).bytes_per_second, 0);
}

}  // namespace
}  // namespace backendbench
