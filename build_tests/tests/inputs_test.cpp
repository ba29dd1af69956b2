// Unit tests of inputs.h: materialising a case against real schemas.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/inputs.h"
#include "backendbench/tensor_values.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

TEST(Materialize, IsDeterministicPerSeed) {
  const auto a = inputs(kAdd, "((T([64], f32), T([64], f32)), {})", 1);
  const auto b = inputs(kAdd, "((T([64], f32), T([64], f32)), {})", 1);
  const auto c = inputs(kAdd, "((T([64], f32), T([64], f32)), {})", 2);
  EXPECT_TRUE(at::equal(a[0].toTensor(), b[0].toTensor()));
  EXPECT_FALSE(at::equal(a[0].toTensor(), c[0].toTensor()));
  EXPECT_FALSE(at::equal(a[0].toTensor(), a[1].toTensor()));  // arguments differ from each other
  EXPECT_NE(a[0].toTensor().data_ptr(), b[0].toTensor().data_ptr());
}

TEST(Materialize, DrawsAreIndependentAndReproducible) {
  const auto schema = find_operator(kAdd).schema();
  const CaseSpec spec = make_case("((T([64], f32), T([64], f32)), {})", 3);
  const at::Tensor first = materialize(schema, spec, c10::Device(c10::kCPU), 0)[0].toTensor();
  const at::Tensor second = materialize(schema, spec, c10::Device(c10::kCPU), 1)[0].toTensor();
  const at::Tensor second_again = materialize(schema, spec, c10::Device(c10::kCPU), 1)[0].toTensor();
  EXPECT_FALSE(at::equal(first, second));
  EXPECT_TRUE(at::equal(second, second_again));
  EXPECT_TRUE(at::equal(first, inputs(kAdd, "((T([64], f32), T([64], f32)), {})", 3)[0].toTensor()));  // draw 0: the seed
}

TEST(Materialize, GivenValuesAreUsedExactlyInStorageOrder) {
  const auto stack = inputs(kAdd, "((T([2, 2], f16, stride=(1, 2), values=[nan, -0.0, inf, 1e-06]), "
                                  "T([3], i64, values=[-9007199254740992, 0, 5])), {})");
  const at::Tensor a = stack[0].toTensor();
  EXPECT_EQ(a.strides(), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(std::isnan(a[0][0].item<float>()));
  EXPECT_TRUE(std::signbit(a[1][0].item<float>()));  // storage element 1 is at [1][0]
  EXPECT_EQ(a[0][1].item<float>(), INFINITY);
  EXPECT_GT(a[1][1].item<float>(), 0.0f);  // an f16 denormal, not flushed
  EXPECT_EQ(stack[1].toTensor()[0].item<int64_t>(), -9007199254740992);
  const auto other_draw = materialize(find_operator(kAdd).schema(),
                                      make_case("((T([1], f32, values=[2.5]), T([1], f32)), {})"), c10::Device(c10::kCPU), 1);
  EXPECT_EQ(other_draw[0].toTensor().item<float>(), 2.5f);  // the same in every draw
}

TEST(Materialize, FloatValuesAreNotConfinedToZeroOne) {
  const at::Tensor t = inputs(kAdd, "((T([4096], f16), T([1], f16)), {})")[0].toTensor();
  EXPECT_LT(t.min().item<float>(), 0.0f);
  EXPECT_GT(t.max().item<float>(), 1.0f);
}

TEST(Materialize, IntegersStayInSmallRanges) {
  const at::Tensor t = inputs(kAdd, "((T([4096], i64), T([4096], u8)), {})")[0].toTensor();
  EXPECT_GE(t.min().item<int64_t>(), -9);
  EXPECT_LE(t.max().item<int64_t>(), 9);
  const at::Tensor u = inputs(kAdd, "((T([4096], i64), T([4096], u8)), {})")[1].toTensor();
  EXPECT_EQ(u.scalar_type(), at::kByte);
  EXPECT_GE(u.min().item<int64_t>(), 0);
}

TEST(Materialize, KeepsShapesDtypesAndStrides) {
  const auto stack = inputs(kAdd, "((T([3, 4], f16, stride=(1, 3)), T([2, 3, 4], f32, stride=(0, 4, 1))), {})");
  const at::Tensor a = stack[0].toTensor();
  EXPECT_EQ(a.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(a.strides(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(a.scalar_type(), at::kHalf);
  const at::Tensor b = stack[1].toTensor();
  EXPECT_EQ(b.strides(), (std::vector<int64_t>{0, 4, 1}));  // zero stride: an expanded view
  EXPECT_TRUE(at::equal(b[0], b[1]));
}

TEST(Materialize, ZeroDimAndZeroSizeTensors) {
  const auto stack = inputs(kAdd, "((T([], f32), T([0, 5], f32)), {})");
  EXPECT_EQ(stack[0].toTensor().dim(), 0);
  EXPECT_EQ(stack[1].toTensor().numel(), 0);
  EXPECT_EQ(stack[1].toTensor().sizes(), (std::vector<int64_t>{0, 5}));
  const auto strided_empty = inputs(kAdd, "((T([0, 0], f32, stride=(5, 5)), T([1], f32)), {})");
  EXPECT_EQ(strided_empty[0].toTensor().numel(), 0);
}

TEST(Materialize, FillsDefaultsAndKeywords) {
  const auto defaulted = inputs(kAdd, "((T([2], f32), T([2], f32)), {})");
  ASSERT_EQ(defaulted.size(), 3u);
  EXPECT_EQ(defaulted[2].toScalar().to<int64_t>(), 1);  // alpha=1
  const auto keyword = inputs(kAdd, "((T([2], f32), T([2], f32)), {'alpha': 0.5})");
  EXPECT_EQ(keyword[2].toScalar().to<double>(), 0.5);
}

TEST(Materialize, NumberForATensorIsAWrappedNumber) {
  const at::Tensor other = inputs(kAdd, "((T([2], f16), 1.0), {})")[1].toTensor();
  EXPECT_EQ(other.dim(), 0);
  EXPECT_TRUE(other.unsafeGetTensorImpl()->is_wrapped_number());
}

TEST(Materialize, DtypesDevicesAndIntLists) {
  const auto copy = inputs(kToCopy, "((T([], f32),), {'dtype': f16, 'device': \"torch.device('cpu')\"})");
  EXPECT_EQ(copy[1].toScalarType(), at::kHalf);
  EXPECT_EQ(copy[3].toDevice(), c10::Device(c10::kCPU));  // self, dtype, layout, device
  const auto sum = inputs(kSum, "((T([4, 4], f16), [0, 1], True), {'dtype': torch.float32})");
  EXPECT_EQ(sum[1].toIntVector(), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(sum[2].toBool());
  EXPECT_EQ(sum[3].toScalarType(), at::kFloat);
}

TEST(Materialize, MismatchesNameTheArgument) {
  try {
    inputs(kAdd, "((T([2], f32), 'text'), {})");
    FAIL();
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "argument 'other' has type Tensor but the case gives 'text'; expected T([shape], dtype) or a number");
  }
  EXPECT_THROW(inputs(kAdd, "((T([2], f32), T([2], f32)), {'beta': 1})"), std::invalid_argument);
  EXPECT_THROW(inputs(kAdd, "((T([2], f32),), {})"), std::invalid_argument);  // other missing
  EXPECT_THROW(inputs(kAdd, "((T([2], f32), T([2], f32), 1, 2), {})"), std::invalid_argument);
}

TEST(FindOperator, UnknownOperatorThrows) { EXPECT_THROW(find_operator(kMissing), std::runtime_error); }

TEST(Materialize, TheSaltChangesEveryDrawAndReplaysExactly) {
  const OperatorSpec& op = kAdd;
  const auto schema = find_operator(op).schema();
  const CaseSpec spec = make_case("((T([64], f32), T([64], f32)), {})");
  const c10::Device cpu(c10::kCPU);
  auto first = [&](uint64_t salt, int draw) { return materialize(schema, spec, cpu, draw, salt)[0].toTensor(); };
  EXPECT_TRUE(at::equal(first(0, 0), materialize(schema, spec, cpu)[0].toTensor()));  // salt 0: the case's own seed
  EXPECT_FALSE(at::equal(first(0, 0), first(99, 0)));
  EXPECT_FALSE(at::equal(first(99, 0), first(99, 1)));
  EXPECT_TRUE(at::equal(first(99, 1), first(99, 1)));  // the same salt replays the same values
  EXPECT_NE(draw_seed(1, 0, 5), draw_seed(1, 0, 6));
}

}  // namespace
}  // namespace backendbench
