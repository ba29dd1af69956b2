// Unit tests of compare.h: the recursive output comparison and its tolerances.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/compare.h"
#include "backendbench/operator_facts.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

Comparison compare(const at::Tensor& expected, const at::Tensor& actual) { return compare_outputs({expected}, {actual}); }

TEST(Compare, EqualTensorsPass) {
  const at::Tensor t = at::randn({4, 4});
  const Comparison result = compare(t, t.clone());
  EXPECT_TRUE(result.equal) << result.message;
  EXPECT_EQ(result.max_abs_error, 0);
}

TEST(Compare, OneWrongElementFailsWithItsIndex) {
  const at::Tensor expected = at::zeros({2, 3});
  at::Tensor actual = expected.clone();
  actual[1][2] = 0.5;
  const Comparison result = compare(expected, actual);
  EXPECT_FALSE(result.equal);
  EXPECT_EQ(result.message, "output 0: 1 of 6 values differ beyond rtol=1.3e-06 atol=1e-05; first at index [1, 2]: expected 0, got 0.5");
  EXPECT_DOUBLE_EQ(result.max_abs_error, 0.5);
}

TEST(Compare, ToleranceFollowsTheDtype) {
  const at::Tensor expected = at::ones({1}, at::kHalf);
  EXPECT_TRUE(compare(expected, expected + 0.0009).equal);   // within f16's rtol=1e-3
  EXPECT_FALSE(compare(expected, expected + 0.004).equal);   // beyond it (one f16 ulp at 1 is ~0.001)
  EXPECT_FALSE(compare(at::ones({1}, at::kFloat), at::ones({1}, at::kFloat) + 1e-4).equal);
  EXPECT_EQ(tolerance_for(at::kBFloat16).rtol, 1.6e-2);
  EXPECT_EQ(tolerance_for(at::kLong).atol, 0);
}

TEST(Compare, HalfPrecisionFiguresAreExact) {
  // Half and bfloat16 compare in float32: their values and the differences of two of them are
  // exact there, so the figures and the message are those of a float64 comparison.
  const at::Tensor expected = at::tensor({1.0, 2048.0, 0.25, -3.0}).to(at::kHalf);
  const at::Tensor actual = at::tensor({1.001953125, 2048.0, 0.25, -2.998046875}).to(at::kHalf);  // 2 ulps, 1 ulp off
  const Comparison result = compare(expected, actual);
  EXPECT_FALSE(result.equal);
  EXPECT_EQ(result.message,
            "output 0: 1 of 4 values differ beyond rtol=0.001 atol=1e-05; first at index [0]: expected 1, got 1.00195");
  EXPECT_DOUBLE_EQ(result.max_abs_error, 0.001953125);
  EXPECT_DOUBLE_EQ(result.max_rel_error, 0.001953125);
  // -3 against -2.998046875: 0.001953125 <= 1e-5 + 1e-3 * 3, close. One ulp at 1 is within
  // 3 % of the bound (0.0009765625 against 0.00101) and stays close.
  const Comparison one_ulp = compare(at::ones({1}, at::kHalf), at::tensor({1.0009765625}).to(at::kHalf));
  EXPECT_TRUE(one_ulp.equal) << one_ulp.message;
  EXPECT_DOUBLE_EQ(one_ulp.max_abs_error, 0.0009765625);
  const at::Tensor bfloat = at::tensor({1.0, 4.0}).to(at::kBFloat16);
  const Comparison bfloat_result = compare(bfloat, at::tensor({1.0, 4.0625}).to(at::kBFloat16));  // 2 ulps at 4
  EXPECT_TRUE(bfloat_result.equal) << bfloat_result.message;  // 0.0625 <= 1e-5 + 1.6e-2 * 4
  EXPECT_DOUBLE_EQ(bfloat_result.max_abs_error, 0.0625);
  EXPECT_DOUBLE_EQ(bfloat_result.max_rel_error, 0.015625);
}

TEST(Compare, NanEqualsNanAndInfinitiesMustMatch) {
  const at::Tensor expected = at::tensor({NAN, INFINITY, -INFINITY});
  EXPECT_TRUE(compare(expected, expected.clone()).equal);
  EXPECT_FALSE(compare(expected, at::tensor({NAN, INFINITY, INFINITY})).equal);
  EXPECT_FALSE(compare(expected, at::tensor({0.0f, INFINITY, -INFINITY})).equal);
}

TEST(Compare, ShapeDtypeAndStructure) {
  EXPECT_EQ(compare(at::zeros({2, 3}), at::zeros({3, 2})).message, "output 0: shape [3, 2], expected [2, 3]");
  EXPECT_EQ(compare(at::zeros({2}), at::zeros({2}, at::kDouble)).message, "output 0: dtype Double, expected Float");
  EXPECT_EQ(compare_outputs({at::zeros({1})}, {}).message, "returned 0 values, expected 1");
  const c10::IValue pair = c10::ivalue::Tuple::create({at::zeros({1}), at::zeros({1})});
  const c10::IValue wrong = c10::ivalue::Tuple::create({at::zeros({1}), at::ones({1})});
  const Comparison tuple = compare_outputs({pair}, {wrong});
  EXPECT_FALSE(tuple.equal);
  EXPECT_EQ(tuple.message.rfind("output 0[1]: ", 0), 0u);
  EXPECT_FALSE(compare_outputs({c10::IValue(int64_t{3})}, {c10::IValue(int64_t{4})}).equal);
  EXPECT_TRUE(compare_outputs({c10::IValue(int64_t{3})}, {c10::IValue(int64_t{3})}).equal);
}

TEST(Compare, IntegersCompareExactly) {
  EXPECT_FALSE(compare(at::tensor({1, 2}, at::kLong), at::tensor({1, 3}, at::kLong)).equal);
  const at::Tensor flags = at::tensor({1, 0}).to(at::kBool);
  EXPECT_TRUE(compare(flags, flags.clone()).equal);
  EXPECT_FALSE(compare(flags, flags.logical_not()).equal);
}

TEST(Compare, SparseTensorsCompareAsDense) {
  const at::Tensor dense = at::tensor({0.0f, 2.0f, 0.0f, 3.0f});
  EXPECT_TRUE(compare(dense.to_sparse(), dense.to_sparse()).equal);
  EXPECT_FALSE(compare(dense.to_sparse(), (dense * 2).to_sparse()).equal);
  EXPECT_EQ(compare(dense.to_sparse(), dense).message, "output 0: layout Strided, expected Sparse");
}

TEST(Compare, AccumulationToleranceScalesWithTheOutput) {
  // Sums near 8 in f16: one ulp is 2^-7; a different summation order moves them a few ulps.
  const at::Tensor expected = at::full({64}, 7.5, at::kHalf);
  const at::Tensor reordered = expected + 4 * 0.0078125;
  EXPECT_FALSE(compare_outputs({expected}, {reordered}).equal);
  CompareOptions accumulating;
  accumulating.scale_ulps = kAccumulationUlps;
  EXPECT_TRUE(compare_outputs({expected}, {reordered}, accumulating).equal);
  EXPECT_FALSE(compare_outputs({expected}, {expected + 1.0}, accumulating).equal);  // still catches real errors
  EXPECT_TRUE(facts_of("scatter_add.default").accumulates_in_any_order);
  EXPECT_FALSE(facts_of("add.Tensor").accumulates_in_any_order);
}

TEST(Compare, UndefinedOutputPositionsCompareMetadataOnly) {
  CompareOptions options;
  options.metadata_only_outputs = {1};
  const std::vector<c10::IValue> expected = {at::zeros({2}), at::zeros({3}, at::kByte)};
  EXPECT_TRUE(compare_outputs(expected, {at::zeros({2}), at::ones({3}, at::kByte)}, options).equal);
  EXPECT_FALSE(compare_outputs(expected, {at::ones({2}), at::ones({3}, at::kByte)}, options).equal);
  EXPECT_FALSE(compare_outputs(expected, {at::zeros({2}), at::ones({4}, at::kByte)}, options).equal);
  EXPECT_EQ(facts_of("_cudnn_rnn.default").undefined_outputs, (std::vector<size_t>{3}));
}

}  // namespace
}  // namespace backendbench
