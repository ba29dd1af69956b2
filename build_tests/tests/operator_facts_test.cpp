// Unit tests of operator_facts.h: the per-operator table and the limitations it drives.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/compare.h"
#include "backendbench/operator_facts.h"
#include "backendbench/settings.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

const OperatorSpec kNewEmpty{"t", "new_empty_strided.default", "x", "aten::new_empty_strided", "", nullptr, 0};

TEST(Policies, DeviceLimitationsAreDocumentedPerDeviceType) {
  EXPECT_TRUE(device_limitation(facts_of("_softmax.default"), "cpu", "((T([4, 8], f16), -1, True), {})").has_value());
  EXPECT_FALSE(device_limitation(facts_of("_softmax.default"), "cpu", "((T([4, 8], f16), -1, False), {})").has_value());
  EXPECT_FALSE(device_limitation(facts_of("_softmax.default"), "cuda", "((T([4, 8], f16), -1, True), {})").has_value());
}

TEST(Policies, UndefinedValuesCompareMetadataOnly) {
  EXPECT_TRUE(facts_of("new_empty_strided.default").undefined_values);
  EXPECT_FALSE(facts_of("relu.default").undefined_values);
  auto stack = inputs(kNewEmpty, "((T([2, 3], f16), [2, 3], [1, 2]), {})");
  const auto first = aten_call(find_operator(kNewEmpty), stack);
  const auto second = aten_call(find_operator(kNewEmpty), stack);
  EXPECT_TRUE(compare_outputs(first, second, CompareValues::kMetadataOnly).equal);
  const std::vector<c10::IValue> wrong_strides = {at::empty_strided({2, 3}, {3, 1}, at::kHalf)};
  EXPECT_EQ(compare_outputs(first, wrong_strides, CompareValues::kMetadataOnly).message,
            "output 0: strides [3, 1], expected [1, 2]");
}

TEST(Policies, CpuHalfPrecisionMatrixProductsOverTheLimitAreSkipped) {
  double limit = Settings().cpu_f16_gflop_limit;
  auto square = [](int64_t n, at::ScalarType dtype) {
    return std::vector<c10::IValue>{at::empty({n, n}, dtype), at::empty({n, n}, dtype)};
  };
  const c10::Device cpu(c10::kCPU), cuda(c10::kCUDA, 0);
  const auto big = device_cost_limitation(facts_of("mm.default"), cpu, square(1024, at::kHalf), limit);  // 2.1 GFLOP
  ASSERT_TRUE(big.has_value());
  EXPECT_NE(big->find("f16 matrix product of 2.14748 GFLOP per call, over the CPU limit of 2 GFLOP"), std::string::npos)
      << *big;
  EXPECT_FALSE(device_cost_limitation(facts_of("mm.default"), cpu, square(1000, at::kHalf), limit));  // 2.0 GFLOP: at the limit
  EXPECT_FALSE(device_cost_limitation(facts_of("mm.default"), cpu, square(1024, at::kFloat), limit));
  EXPECT_FALSE(device_cost_limitation(facts_of("mm.default"), cpu, square(1024, at::kBFloat16), limit));
  EXPECT_FALSE(device_cost_limitation(facts_of("mm.default"), cuda, square(1024, at::kHalf), limit));
  EXPECT_FALSE(device_cost_limitation(facts_of("add.Tensor"), cpu, square(1024, at::kHalf), limit));
  limit = 0;  // no limit
  EXPECT_FALSE(device_cost_limitation(facts_of("mm.default"), cpu, square(1024, at::kHalf), limit));
  limit = 1;
  EXPECT_TRUE(device_cost_limitation(facts_of("mm.default"), cpu, square(1000, at::kHalf), limit));
}

}  // namespace
}  // namespace backendbench
