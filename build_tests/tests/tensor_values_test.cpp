// Unit tests of tensor_values.h: copies and precision changes of a call's values.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/tensor_values.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

TEST(CloneInputs, CopiesStorageAndKeepsLayout) {
  const auto original = inputs(kAdd, "((T([2, 3, 4], f32, stride=(0, 4, 1)), 2.5), {'alpha': 3})");
  const auto copies = clone_inputs(original);
  const at::Tensor a = original[0].toTensor();
  const at::Tensor b = copies[0].toTensor();
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_EQ(b.strides(), a.strides());
  EXPECT_NE(a.data_ptr(), b.data_ptr());
  EXPECT_TRUE(copies[1].toTensor().unsafeGetTensorImpl()->is_wrapped_number());
  b.fill_(0);  // writes through the shared (zero-stride) storage of the copy only
  EXPECT_FALSE(at::equal(a, b));
  EXPECT_EQ(copies[2].toScalar().to<int64_t>(), 3);
}

TEST(ViewInputs, SharesStorageAndStaysWhenTheOriginalIsRepointed) {
  const auto original = inputs(kAdd, "((T([2, 3, 4], f32, stride=(0, 4, 1)), 2.5), {'alpha': 3})");
  const auto views = view_inputs(original);
  at::Tensor a = original[0].toTensor();
  const at::Tensor v = views[0].toTensor();
  EXPECT_FALSE(a.is_same(v));
  EXPECT_EQ(v.data_ptr(), a.data_ptr());
  EXPECT_EQ(v.strides(), a.strides());
  EXPECT_TRUE(at::equal(a, v));
  EXPECT_TRUE(views[1].toTensor().unsafeGetTensorImpl()->is_wrapped_number());
  EXPECT_EQ(views[2].toScalar().to<int64_t>(), 3);
  // A call's changed input set into the original, as a kernel worker's answer is: the view keeps
  // the values as they were.
  const at::Tensor before = a.clone();
  a.set_(at::zeros_like(a));
  EXPECT_TRUE(at::equal(v, before));
  EXPECT_FALSE(at::equal(v, a));
}

TEST(PreciseReference, Float64InputsAndResultsRoundedBack) {
  at::Tensor number = at::scalar_to_tensor(2.5);
  number.unsafeGetTensorImpl()->set_wrapped_number(true);
  const std::vector<c10::IValue> inputs = {at::randn({3}).to(at::kHalf), at::arange(3), number};
  const std::vector<c10::IValue> precise = to_double_precision(inputs);
  EXPECT_EQ(precise[0].toTensor().scalar_type(), at::kDouble);
  EXPECT_EQ(precise[1].toTensor().scalar_type(), at::kLong);  // integers stay
  EXPECT_TRUE(precise[2].toTensor().unsafeGetTensorImpl()->is_wrapped_number());
  EXPECT_NE(precise[0].toTensor().data_ptr(), inputs[0].toTensor().data_ptr());
  const auto rounded = round_like({precise[0], precise[1]}, {inputs[0], inputs[1]});
  EXPECT_EQ(rounded[0].toTensor().scalar_type(), at::kHalf);
  EXPECT_TRUE(at::equal(rounded[0].toTensor(), inputs[0].toTensor()));
}

}  // namespace
}  // namespace backendbench
