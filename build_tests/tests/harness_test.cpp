// The harness runtime: input materialisation against real schemas, reference calls and the
// output comparison.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/checks.h"
#include "backendbench/harness.h"
#include "backendbench/operator_policies.h"
#include "backendbench/roofline.h"
#include "backendbench/scores.h"
#include "backendbench/timing.h"

#if __has_include(<c10/cuda/CUDAStream.h>) && __has_include(<cuda_runtime_api.h>)
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace backendbench {
namespace {

const OperatorSpec kAdd{"t", "add.Tensor", "add__Tensor", "aten::add", "Tensor", nullptr, 0, nullptr, 0};
const OperatorSpec kToCopy{"t", "_to_copy.default", "_to_copy__default", "aten::_to_copy", "", nullptr, 0, nullptr, 0};
const OperatorSpec kSum{"t", "sum.dim_IntList", "sum__dim_IntList", "aten::sum", "dim_IntList", nullptr, 0, nullptr, 0};
const OperatorSpec kMissing{"t", "frobnicate.default", "frobnicate__default", "aten::frobnicate", "", nullptr, 0, nullptr, 0};

CaseSpec make_case(const char* arguments, uint64_t seed = 7) { return {"c", arguments, "t.txt", 1, seed, 1, "m"}; }

std::vector<c10::IValue> inputs(const OperatorSpec& op, const char* arguments, uint64_t seed = 7) {
  return materialize(find_operator(op).schema(), make_case(arguments, seed), c10::Device(c10::kCPU));
}

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

TEST(CallReference, RunsTheAtenOverload) {
  auto stack = inputs(kAdd, "((T([8], f32), T([8], f32)), {'alpha': 2})");
  const at::Tensor expected = at::add(stack[0].toTensor(), stack[1].toTensor(), 2);
  const auto outputs = call_reference(find_operator(kAdd), stack);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_TRUE(at::equal(outputs[0].toTensor(), expected));
}

// --- comparison --------------------------------------------------------------------------

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

}  // namespace
}  // namespace backendbench

// --- index rules, policies ---------------------------------------------------------------

namespace backendbench {
namespace {

const OperatorSpec kEmbedding{"t", "embedding.default", "embedding__default", "aten::embedding", "", nullptr, 0, nullptr, 0};
const OperatorSpec kGather{"t", "gather.default", "gather__default", "aten::gather", "", nullptr, 0, nullptr, 0};
const OperatorSpec kIndex{"t", "index.Tensor", "index__Tensor", "aten::index", "Tensor", nullptr, 0, nullptr, 0};
const OperatorSpec kBag{"t", "_embedding_bag.default", "_embedding_bag__default", "aten::_embedding_bag", "", nullptr, 0, nullptr, 0};
const OperatorSpec kPoolBackward{"t", "max_pool2d_with_indices_backward.default", "x",
                                 "aten::max_pool2d_with_indices_backward", "", nullptr, 0, nullptr, 0};
const OperatorSpec kNewEmpty{"t", "new_empty_strided.default", "x", "aten::new_empty_strided", "", nullptr, 0, nullptr, 0};

TEST(IndexRules, EmbeddingIndicesStayBelowTheRowCount) {
  const auto stack = inputs(kEmbedding, "((T([7, 4], f32), T([64, 3], i64)), {})");
  const at::Tensor indices = stack[1].toTensor();
  EXPECT_EQ(indices.sizes(), (std::vector<int64_t>{64, 3}));
  EXPECT_GE(indices.min().item<int64_t>(), 0);
  EXPECT_LT(indices.max().item<int64_t>(), 7);
  EXPECT_NO_THROW(call_reference(find_operator(kEmbedding), stack));
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
  EXPECT_NO_THROW(call_reference(find_operator(kIndex), stack));
}

TEST(IndexRules, BagOffsetsAreSortedAndStartAtZero) {
  const auto stack = inputs(kBag, "((T([9, 4], f32), T([20], i64), T([5], i64), False, 0, False, None, False), {})");
  const at::Tensor offsets = stack[2].toTensor();
  EXPECT_EQ(offsets[0].item<int64_t>(), 0);
  EXPECT_TRUE(at::equal(offsets, std::get<0>(offsets.sort())));
  EXPECT_LE(offsets.max().item<int64_t>(), 20);
  EXPECT_NO_THROW(call_reference(find_operator(kBag), stack));
}

TEST(IndexRules, PoolingIndicesComeFromTheForwardPass) {
  const auto stack = inputs(kPoolBackward,
                            "((T([1, 2, 2, 2], f32), T([1, 2, 4, 4], f32), [2, 2], [2, 2], [0, 0], [1, 1], False, "
                            "T([1, 2, 2, 2], i64)), {})");
  const at::Tensor expected = std::get<1>(at::max_pool2d_with_indices(stack[1].toTensor(), {2, 2}, {2, 2}));
  EXPECT_TRUE(at::equal(stack[7].toTensor(), expected));
}

TEST(IndexRules, GridCoordinatesStayNormalised) {
  const OperatorSpec grid_sampler{"t", "grid_sampler_2d.default", "x", "aten::grid_sampler_2d", "", nullptr, 0, nullptr, 0};
  const at::Tensor grid = inputs(grid_sampler, "((T([1, 1, 4, 4], f32), T([1, 8, 8, 2], f32), 0, 0, False), {})")[1].toTensor();
  EXPECT_GE(grid.min().item<float>(), -1.0f);
  EXPECT_LE(grid.max().item<float>(), 1.0f);
  EXPECT_EQ(grid.sizes(), (std::vector<int64_t>{1, 8, 8, 2}));
}

TEST(Policies, DeviceLimitationsAreDocumentedPerDeviceType) {
  EXPECT_TRUE(device_limitation("_softmax.default", "cpu", "((T([4, 8], f16), -1, True), {})").has_value());
  EXPECT_FALSE(device_limitation("_softmax.default", "cpu", "((T([4, 8], f16), -1, False), {})").has_value());
  EXPECT_FALSE(device_limitation("_softmax.default", "cuda", "((T([4, 8], f16), -1, True), {})").has_value());
}

TEST(Policies, UndefinedValuesCompareMetadataOnly) {
  EXPECT_TRUE(has_undefined_values("new_empty_strided.default"));
  EXPECT_FALSE(has_undefined_values("relu.default"));
  auto stack = inputs(kNewEmpty, "((T([2, 3], f16), [2, 3], [1, 2]), {})");
  const auto first = call_reference(find_operator(kNewEmpty), stack);
  const auto second = call_reference(find_operator(kNewEmpty), stack);
  EXPECT_TRUE(compare_outputs(first, second, CompareValues::kMetadataOnly).equal);
  const std::vector<c10::IValue> wrong_strides = {at::empty_strided({2, 3}, {3, 1}, at::kHalf)};
  EXPECT_EQ(compare_outputs(first, wrong_strides, CompareValues::kMetadataOnly).message,
            "output 0: strides [3, 1], expected [1, 2]");
}

TEST(Compare, SparseTensorsCompareAsDense) {
  const at::Tensor dense = at::tensor({0.0f, 2.0f, 0.0f, 3.0f});
  EXPECT_TRUE(compare(dense.to_sparse(), dense.to_sparse()).equal);
  EXPECT_FALSE(compare(dense.to_sparse(), (dense * 2).to_sparse()).equal);
  EXPECT_EQ(compare(dense.to_sparse(), dense).message, "output 0: layout Strided, expected Sparse");
}

}  // namespace
}  // namespace backendbench

namespace backendbench {
namespace {

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

}  // namespace
}  // namespace backendbench

namespace backendbench {
namespace {

TEST(Compare, AccumulationToleranceScalesWithTheOutput) {
  // Sums near 8 in f16: one ulp is 2^-7; a different summation order moves them a few ulps.
  const at::Tensor expected = at::full({64}, 7.5, at::kHalf);
  const at::Tensor reordered = expected + 4 * 0.0078125;
  EXPECT_FALSE(compare_outputs({expected}, {reordered}).equal);
  CompareOptions accumulating;
  accumulating.scale_ulps = kAccumulationUlps;
  EXPECT_TRUE(compare_outputs({expected}, {reordered}, accumulating).equal);
  EXPECT_FALSE(compare_outputs({expected}, {expected + 1.0}, accumulating).equal);  // still catches real errors
  EXPECT_TRUE(accumulates_in_any_order("scatter_add.default"));
  EXPECT_FALSE(accumulates_in_any_order("add.Tensor"));
}

TEST(Compare, UndefinedOutputPositionsCompareMetadataOnly) {
  CompareOptions options;
  options.metadata_only_outputs = {1};
  const std::vector<c10::IValue> expected = {at::zeros({2}), at::zeros({3}, at::kByte)};
  EXPECT_TRUE(compare_outputs(expected, {at::zeros({2}), at::ones({3}, at::kByte)}, options).equal);
  EXPECT_FALSE(compare_outputs(expected, {at::ones({2}), at::ones({3}, at::kByte)}, options).equal);
  EXPECT_FALSE(compare_outputs(expected, {at::zeros({2}), at::ones({4}, at::kByte)}, options).equal);
  EXPECT_EQ(undefined_outputs("_cudnn_rnn.default"), (std::vector<size_t>{3}));
}

TEST(IndexRules, SparseIndicesStayInsideTheSize) {
  const OperatorSpec sparse{"t", "_sparse_coo_tensor_with_dims_and_tensors.default", "x",
                            "aten::_sparse_coo_tensor_with_dims_and_tensors", "", nullptr, 0, nullptr, 0};
  const auto stack = inputs(sparse, "((1, 1, [7, 3], T([1, 50], i64), T([50, 3], f32)), {'dtype': f32, 'layout': "
                                    "torch.sparse_coo, 'device': 'cpu', 'pin_memory': None})");
  const at::Tensor indices = stack[3].toTensor();
  EXPECT_EQ(indices.sizes(), (std::vector<int64_t>{1, 50}));
  EXPECT_GE(indices.min().item<int64_t>(), 0);
  EXPECT_LT(indices.max().item<int64_t>(), 7);
  const auto output = call_reference(find_operator(sparse), stack);
  EXPECT_NO_THROW(output[0].toTensor().to_dense());
}

}  // namespace
}  // namespace backendbench

// --- kernel-call checks ---------------------------------------------------------------------

namespace {
at::Tensor relu_that_falls_back(const at::Tensor& self) { return at::relu(self); }
at::Tensor relu_written_out(const at::Tensor& self) { return self.clamp_min(0); }
at::Tensor relu_that_mutates_its_input(const at::Tensor& self) {
  const_cast<at::Tensor&>(self).clamp_min_(0);
  return self.clone();
}
}  // namespace

namespace backendbench {
namespace {

const OperatorSpec kRelu{"t", "relu.default", "relu__default", "aten::relu", "", nullptr, 0, nullptr, 0};
const OperatorSpec kAddInPlace{"t", "add_.Tensor", "add___Tensor", "aten::add_", "Tensor", nullptr, 0, nullptr, 0};

std::vector<std::string> dispatched_by(at::Tensor (*kernel)(const at::Tensor&), std::vector<c10::IValue> stack) {
  const c10::KernelFunction function = c10::KernelFunction::makeFromUnboxedRuntimeFunction(kernel);
  const c10::OperatorHandle relu = find_operator(kRelu);
  return record_operator_calls([&] { call_kernel(relu, function, stack, c10::Device(c10::kCPU)); });
}

TEST(Fallback, AKernelCallingTheOperatorItReplacesIsCaught) {
  const auto stack = inputs(kRelu, "((T([16], f32),), {})");
  const c10::FunctionSchema& schema = find_operator(kRelu).schema();
  const std::vector<std::string> calls = dispatched_by(&relu_that_falls_back, stack);
  EXPECT_EQ(find_fallback(schema, calls), "aten::relu");
  EXPECT_EQ(find_fallback(schema, dispatched_by(&relu_written_out, stack)), "");  // clamp_min is not relu
}

TEST(Fallback, VariantsOfTheOperatorCount) {
  const c10::FunctionSchema& schema = find_operator(kAdd).schema();
  EXPECT_EQ(find_fallback(schema, {"aten::empty.memory_format", "aten::add_.Tensor"}), "aten::add_.Tensor");
  EXPECT_EQ(find_fallback(schema, {"aten::add.out"}), "aten::add.out");
  EXPECT_EQ(find_fallback(schema, {"aten::addmm", "aten::addcmul"}), "");
}

TEST(Fallback, RecordingIsThreadLocalAndStops) {
  const at::Tensor t = at::ones({4});
  const auto calls = record_operator_calls([&] { at::relu(t); });
  EXPECT_NE(std::find(calls.begin(), calls.end(), "aten::relu"), calls.end());
  at::relu(t);  // after recording: nothing is kept
  EXPECT_EQ(record_operator_calls([] {}).size(), 0u);
}

TEST(InputChecks, AMutatedReadOnlyInputIsCaught) {
  const auto before = inputs(kRelu, "((T([16], f32),), {})");
  auto after = clone_inputs(before);
  relu_that_mutates_its_input(after[0].toTensor());
  const c10::FunctionSchema& schema = find_operator(kRelu).schema();
  EXPECT_EQ(find_mutated_input(schema, {}, before, after), "argument 'self' is read-only in the schema but the kernel changed it");
  EXPECT_EQ(find_mutated_input(schema, {}, before, clone_inputs(before)), "");
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

TEST(InputChecks, ComplexHalfInputsCanBeChecked) {
  const auto schema = find_operator(kToCopy).schema();
  const at::Tensor input = at::randn({4}, at::kComplexFloat).to(at::kComplexHalf);
  const std::vector<c10::IValue> before = {input.clone()};
  EXPECT_EQ(find_mutated_input(schema, {}, before, {input.clone()}), "");
  EXPECT_NE(find_mutated_input(schema, {}, before, {input * 2}), "");
  EXPECT_TRUE(compare_outputs({input}, {input.clone()}).equal);
}

TEST(InputChecks, AFunctionalOutputMustNotAliasAnInput) {
  const auto schema = find_operator(kAdd).schema();
  const at::Tensor self = at::randn({4});
  const std::vector<c10::IValue> inputs = {self, at::randn({4}), 1};
  EXPECT_EQ(find_aliased_output(schema, inputs, {self + 1}), "");
  EXPECT_NE(find_aliased_output(schema, inputs, {self.view({2, 2})}).find("shares memory with argument 'self'"),
            std::string::npos);
}

TEST(InputChecks, WrittenArgumentsComeFromTheSchema) {
  EXPECT_EQ(written_arguments(find_operator(kAddInPlace).schema()), (std::vector<size_t>{0}));
  EXPECT_TRUE(written_arguments(find_operator(kAdd).schema()).empty());
  // add_ writes self: a changed self is not a read-only violation.
  const auto before = inputs(kAddInPlace, "((T([4], f32), T([4], f32)), {})");
  auto after = clone_inputs(before);
  call_reference(find_operator(kAddInPlace), after);
  EXPECT_EQ(find_mutated_input(find_operator(kAddInPlace).schema(), {0}, before, after), "");
}

TEST(InputChecks, BatchNormWritesItsRunningStatisticsWithoutSayingSo) {
  const OperatorSpec batch_norm{"t", "native_batch_norm.default", "x", "aten::native_batch_norm", "", nullptr, 0, nullptr, 0};
  const c10::FunctionSchema& schema = find_operator(batch_norm).schema();
  EXPECT_TRUE(written_arguments(schema).empty());
  EXPECT_EQ(written_arguments(schema, unannotated_writes("native_batch_norm.default")), (std::vector<size_t>{3, 4}));
}

}  // namespace
}  // namespace backendbench

namespace backendbench {
namespace {

TEST(Timing, LocationEstimateShrinksWithSamples) {
  auto noisy = [](int count) {  // 1 ± 5 %, deterministic, plus one outlier the middle half ignores
    std::vector<double> values;
    for (int i = 0; i < count; ++i) values.push_back(1.0 + 0.05 * std::sin(i * 12.9898));
    values.push_back(50.0);
    return values;
  };
  const LocationEstimate a = estimate_location(noisy(16)), b = estimate_location(noisy(1600));
  EXPECT_NEAR(a.value, 1.0, 0.03);
  EXPECT_NEAR(b.value, 1.0, 0.01);
  EXPECT_GT(a.relative_error, 0.002);
  EXPECT_LT(b.relative_error, a.relative_error / 5);
}

TEST(Timing, ACoarseTimerDoesNotEndSamplingEarly) {
  // Two timer ticks, mostly the lower one: the median's MAD would be 0 ("known exactly").
  StoppingRule rule;
  rule.min_samples = 20;
  rule.target_relative_error = 0.003;
  std::vector<double> ticks(20, 3.4);
  for (int i = 0; i < 8; ++i) ticks[i] = 3.6;
  EXPECT_FALSE(rule.done(ticks, 0.0));
}

TEST(Timing, StoppingRuleNeedsMinimumThenStopsOnNoiseOrCap) {
  StoppingRule rule;
  rule.min_samples = 10;
  rule.max_samples = 1000;
  rule.target_relative_error = 0.01;
  rule.seconds_cap = 1.0;
  const std::vector<double> steady(10, 2.0), noisy = {1, 3, 2, 1.5, 2.5, 1, 3, 2, 1.5, 2.5};
  EXPECT_FALSE(rule.done(std::vector<double>(9, 2.0), 0.0));  // below the minimum
  EXPECT_TRUE(rule.done(steady, 0.0));                        // no noise: known exactly
  EXPECT_FALSE(rule.done(noisy, 0.0));                        // noisy: keep sampling
  EXPECT_TRUE(rule.done(noisy, 1.5));                         // unless the time cap is spent
  EXPECT_TRUE(rule.done(std::vector<double>(1000, 1.0), 0.0));
}

TEST(Timing, InterleavedSpeedupOnTheCpu) {
  StoppingRule rule;
  rule.min_samples = 5;
  rule.max_samples = 40;
  Timer timer(c10::Device(c10::kCPU), rule);
  const at::Tensor x = at::randn({1 << 16});
  auto once = [&](Timer::Inputs) { (void)at::exp(x); return Timer::Inputs{}; };
  auto four_times = [&](Timer::Inputs) { for (int i = 0; i < 4; ++i) (void)at::exp(x); return Timer::Inputs{}; };
  const PairedSamples pair = timer.sample_interleaved([] { return Timer::Inputs{}; }, once, four_times);
  EXPECT_EQ(pair.reference.count(), pair.kernel.count());
  EXPECT_LT(pair.speedup(), 0.6);  // four times the work cannot be faster than half the time
  EXPECT_GT(pair.speedup(), 0.1);
}

TEST(Timing, BatchesAreLedByEachSideInTurn) {
  StoppingRule rule;
  rule.min_samples = rule.max_samples = 8;  // two batches of four pairs
  SamplingLayout layout;
  layout.batch_pairs = 4;
  Timer timer(c10::Device(c10::kCPU), rule, layout);
  std::string order;
  auto reference = [&](Timer::Inputs) { order += 'R'; return Timer::Inputs{}; };
  auto kernel = [&](Timer::Inputs) { order += 'K'; return Timer::Inputs{}; };
  const PairedSamples pair = timer.sample_interleaved([] { return Timer::Inputs{}; }, reference, kernel);
  EXPECT_EQ(order, "RKKRRKKR" "KRRKKRRK");
  EXPECT_EQ(pair.ratios.size(), 8u);
}

TEST(Timing, SamplingLayoutFromTheEnvironment) {
  const char* variables[] = {"BACKENDBENCH_LAYOUT", "BACKENDBENCH_FLUSH", "BACKENDBENCH_FLUSH_MIB",
                             "BACKENDBENCH_BATCH_PAIRS"};
  for (const char* name : variables) unsetenv(name);
  const SamplingLayout standard = SamplingLayout::from_environment();
  EXPECT_EQ(standard.flush, SamplingLayout::Flush::kRead);
  EXPECT_EQ(standard.flush_bytes, int64_t{128} << 20);
  EXPECT_EQ(standard.batch_pairs, 4);
  setenv("BACKENDBENCH_LAYOUT", "do_bench", 1);
  const SamplingLayout copied = SamplingLayout::from_environment();
  EXPECT_EQ(copied.flush, SamplingLayout::Flush::kWrite);
  EXPECT_EQ(copied.flush_bytes, int64_t{256} << 20);
  EXPECT_EQ(copied.batch_pairs, 64);
  setenv("BACKENDBENCH_BATCH_PAIRS", "8", 1);  // a single field on top of the named layout
  setenv("BACKENDBENCH_FLUSH", "read", 1);
  const SamplingLayout mixed = SamplingLayout::from_environment();
  EXPECT_EQ(mixed.batch_pairs, 8);
  EXPECT_EQ(mixed.flush, SamplingLayout::Flush::kRead);
  EXPECT_EQ(mixed.flush_bytes, int64_t{256} << 20);
  setenv("BACKENDBENCH_FLUSH", "clean", 1);
  EXPECT_THROW(
      {
        try {
          SamplingLayout::from_environment();
        } catch (const std::invalid_argument& error) {
          EXPECT_STREQ(error.what(),
                       "error: environment variable BACKENDBENCH_FLUSH='clean' is not a sampling layout setting; "
                       "expected 'read' or 'write'");
          throw;
        }
      },
      std::invalid_argument);
  for (const char* name : variables) unsetenv(name);
}

#if __has_include(<c10/cuda/CUDAStream.h>) && __has_include(<cuda_runtime_api.h>)
// A "kernel" that does its work on a side stream: events on the current stream miss it; the
// hidden-work guard must not.
TEST(Timing, WorkHiddenOnASideStreamIsFlagged) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const c10::Device device(c10::kCUDA, 0);
  Timer timer(device);
  const at::Tensor x = at::randn({1 << 24}, at::TensorOptions().device(device));
  auto reference = [&](Timer::Inputs) { (void)at::relu(x); return Timer::Inputs{}; };
  auto honest = [&](Timer::Inputs) { (void)at::relu(x); return Timer::Inputs{}; };
  auto hiding = [&](Timer::Inputs) {
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(side);
    at::Tensor y = x;
    for (int i = 0; i < 20; ++i) y = at::relu(y) + 1;  // the real work, on the side stream
    return Timer::Inputs{};
  };
  const auto none = [] { return Timer::Inputs{}; };
  EXPECT_EQ(timer.hidden_work_seconds(none, reference, honest), 0);
  EXPECT_GT(timer.hidden_work_seconds(none, reference, hiding), 0);
}
#endif

TEST(Scores, GeomeansFailuresAndPerfAtP) {
  const std::vector<ScoredCase> cases = {
      {"a", "c1", "impl1", "", true, 10, 5, 2.0},  {"a", "c2", "impl1", "", true, 10, 20, 0.5},
      {"b", "c1", "impl1", "", true, 10, 2.5, 4.0}, {"b", "c2", "impl1", "", false, 10, 0, 0},
      {"b", "c1", "aten", "", true, 10, 10, 1.0}};
  const Summary summary = summarize(cases);
  ASSERT_EQ(summary.backends.size(), 1u);  // aten is not scored
  const BackendScore& score = summary.backends.at("impl1");
  EXPECT_NEAR(score.operators.at("a").geomean_speedup, 1.0, 1e-12);  // sqrt(2 × 0.5)
  EXPECT_NEAR(score.operators.at("b").geomean_speedup, 2.0, 1e-12);  // sqrt(4 × 1.0): the failure counts as 1.0
  EXPECT_FALSE(score.operators.at("b").correct());
  EXPECT_NEAR(score.geomean_speedup, std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(score.perf_at.at(0.0), 0.5);  // b is incorrect, so only a counts
  EXPECT_DOUBLE_EQ(score.perf_at.at(1.0), 0.0);  // a's 1.0 is not above 1
  EXPECT_NE(summary.json().find("\"perf@1.5\""), std::string::npos);
}

TEST(Roofline, BytesAndFlops) {
  const std::vector<c10::IValue> mm_inputs = {at::empty({64, 32}, at::kHalf), at::empty({32, 16}, at::kHalf)};
  const Work mm = work_of("mm.default", mm_inputs, {at::empty({64, 16}, at::kHalf)});
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 64 * 32 * 16);
  EXPECT_DOUBLE_EQ(mm.bytes, 2.0 * (64 * 32 + 32 * 16 + 64 * 16));
  EXPECT_EQ(mm.dtype, at::kHalf);
  // Elementwise: one operation per element; a broadcast (zero-stride) input is read once.
  const at::Tensor row = at::empty({1, 8}).expand({4, 8});
  const Work add = work_of("add.Tensor", {at::empty({4, 8}), row, 1}, {at::empty({4, 8})});
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
  EXPECT_DOUBLE_EQ(matrix_flops("convolution.default", arguments), 2.0 * output.numel() * 2 * 3 * 2);
  std::vector<c10::IValue> transposed = arguments;
  transposed[1] = at::randn({4, 3, 3, 2});
  transposed[6] = true;
  EXPECT_DOUBLE_EQ(matrix_flops("convolution.default", transposed), 2.0 * input.numel() * 3 * 3 * 2);
  EXPECT_EQ(matrix_flops("relu.default", {input}), 0);
}

TEST(Policies, CpuHalfPrecisionMatrixProductsOverTheLimitAreSkipped) {
  unsetenv("BACKENDBENCH_CPU_F16_GFLOP_LIMIT");
  auto square = [](int64_t n, at::ScalarType dtype) {
    return std::vector<c10::IValue>{at::empty({n, n}, dtype), at::empty({n, n}, dtype)};
  };
  const c10::Device cpu(c10::kCPU), cuda(c10::kCUDA, 0);
  const auto big = device_cost_limitation("mm.default", cpu, square(1024, at::kHalf));  // 2.1 GFLOP
  ASSERT_TRUE(big.has_value());
  EXPECT_NE(big->find("f16 matrix product of 2.14748 GFLOP per call, over the CPU limit of 2 GFLOP"), std::string::npos)
      << *big;
  EXPECT_FALSE(device_cost_limitation("mm.default", cpu, square(1000, at::kHalf)));  // 2.0 GFLOP: at the limit
  EXPECT_FALSE(device_cost_limitation("mm.default", cpu, square(1024, at::kFloat)));
  EXPECT_FALSE(device_cost_limitation("mm.default", cpu, square(1024, at::kBFloat16)));
  EXPECT_FALSE(device_cost_limitation("mm.default", cuda, square(1024, at::kHalf)));
  EXPECT_FALSE(device_cost_limitation("add.Tensor", cpu, square(1024, at::kHalf)));
  setenv("BACKENDBENCH_CPU_F16_GFLOP_LIMIT", "0", 1);
  EXPECT_FALSE(device_cost_limitation("mm.default", cpu, square(1024, at::kHalf)));
  setenv("BACKENDBENCH_CPU_F16_GFLOP_LIMIT", "1", 1);
  EXPECT_TRUE(device_cost_limitation("mm.default", cpu, square(1000, at::kHalf)));
  unsetenv("BACKENDBENCH_CPU_F16_GFLOP_LIMIT");
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
