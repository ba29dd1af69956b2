// Unit tests of index_rules.h: valid values for index-like arguments.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/compare.h"
#include "backendbench/index_rules.h"
#include "backendbench/operator_facts.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

const OperatorSpec kEmbedding{"t", "embedding.default", "embedding__default", "aten::embedding", "", nullptr, 0};
const OperatorSpec kGather{"t", "gather.default", "gather__default", "aten::gather", "", nullptr, 0};
const OperatorSpec kIndex{"t", "index.Tensor", "index__Tensor", "aten::index", "Tensor", nullptr, 0};
const OperatorSpec kBag{"t", "_embedding_bag.default", "_embedding_bag__default", "aten::_embedding_bag", "", nullptr, 0};
const OperatorSpec kPoolBackward{"t", "max_pool2d_with_indices_backward.default", "x",
                                 "aten::max_pool2d_with_indices_backward", "", nullptr, 0};

TEST(IndexRules, EmbeddingIndicesStayBelowTheRowCount) {
  const auto stack = inputs(kEmbedding, "((T([7, 4], f32), T([64, 3], i64)), {})");
  const at::Tensor indices = stack[1].toTensor();
  EXPECT_EQ(indices.sizes(), (std::vector<int64_t>{64, 3}));
  EXPECT_GE(indices.min().item<int64_t>(), 0);
  EXPECT_LT(indices.max().item<int64_t>(), 7);
  EXPECT_NO_THROW(aten_call(find_operator(kEmbedding), stack));
}

TEST(IndexRules, GivenIndicesAreLeftAsGiven) {
  const auto stack = inputs(kEmbedding, "((T([7, 4], f32), T([3], i64, values=[6, 0, 6])), {})");
  EXPECT_TRUE(at::equal(stack[1].toTensor(), at::tensor({6, 0, 6}, at::kLong)));
}

TEST(IndexRules, GatherIndicesStayInsideTheIndexedDimension) {
  const auto stack = inputs(kGather, "((T([5, 3], f32), 1, T([5, 8], i64)), {})");
  EXPECT_LT(stack[2].toTensor().max().item<int64_t>(), 3);
  EXPECT_GE(stack[2].toTensor().min().item<int64_t>(), 0);
}

TEST(IndexRules, IndexListEntriesFollowTheirDimension) {
  const auto stack = inputs(kIndex, "((T([4, 6], f32), [None, T([10], i64)]), {})");
  const auto indices = stack[1].to<c10::List<std::optional<at::Tensor>>>();
  EXPECT_FALSE(indices.get(0).has_value());
  EXPECT_LT(indices.get(1)->max().item<int64_t>(), 6);
  EXPECT_NO_THROW(aten_call(find_operator(kIndex), stack));
}

TEST(IndexRules, BagOffsetsAreSortedAndStartAtZero) {
  const auto stack = inputs(kBag, "((T([9, 4], f32), T([20], i64), T([5], i64), False, 0, False, None, False), {})");
  const at::Tensor offsets = stack[2].toTensor();
  EXPECT_EQ(offsets[0].item<int64_t>(), 0);
  EXPECT_TRUE(at::equal(offsets, std::get<0>(offsets.sort())));
  EXPECT_LE(offsets.max().item<int64_t>(), 20);
  EXPECT_NO_THROW(aten_call(find_operator(kBag), stack));
}

TEST(IndexRules, PoolingIndicesComeFromTheForwardPass) {
  const auto stack = inputs(kPoolBackward,
                            "((T([1, 2, 2, 2], f32), T([1, 2, 4, 4], f32), [2, 2], [2, 2], [0, 0], [1, 1], False, "
                            "T([1, 2, 2, 2], i64)), {})");
  const at::Tensor expected = std::get<1>(at::max_pool2d_with_indices(stack[1].toTensor(), {2, 2}, {2, 2}));
  EXPECT_TRUE(at::equal(stack[7].toTensor(), expected));
}

TEST(IndexRules, GridCoordinatesStayNormalised) {
  const OperatorSpec grid_sampler{"t", "grid_sampler_2d.default", "x", "aten::grid_sampler_2d", "", nullptr, 0};
  const at::Tensor grid = inputs(grid_sampler, "((T([1, 1, 4, 4], f32), T([1, 8, 8, 2], f32), 0, 0, False), {})")[1].toTensor();
  EXPECT_GE(grid.min().item<float>(), -1.0f);
  EXPECT_LE(grid.max().item<float>(), 1.0f);
  EXPECT_EQ(grid.sizes(), (std::vector<int64_t>{1, 8, 8, 2}));
}

TEST(IndexRules, SparseIndicesStayInsideTheSize) {
  const OperatorSpec sparse{"t", "_sparse_coo_tensor_with_dims_and_tensors.default", "x",
                            "aten::_sparse_coo_tensor_with_dims_and_tensors", "", nullptr, 0};
  const auto stack = inputs(sparse, "((1, 1, [7, 3], T([1, 50], i64), T([50, 3], f32)), {'dtype': f32, 'layout': "
                                    "torch.sparse_coo, 'device': 'cpu', 'pin_memory': None})");
  const at::Tensor indices = stack[3].toTensor();
  EXPECT_EQ(indices.sizes(), (std::vector<int64_t>{1, 50}));
  EXPECT_GE(indices.min().item<int64_t>(), 0);
  EXPECT_LT(indices.max().item<int64_t>(), 7);
  const auto output = aten_call(find_operator(sparse), stack);
  EXPECT_NO_THROW(output[0].toTensor().to_dense());
}

}  // namespace
}  // namespace backendbench
