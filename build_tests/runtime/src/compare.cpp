// Output comparison. Tolerances: torch.testing.assert_close's defaults per dtype (docs:
// README "Correctness"), NaN equal to NaN, infinities equal only to the same infinity.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "backendbench/compare.h"

#include "backendbench/operator_facts.h"
#include "backendbench/tensor_values.h"

namespace backendbench {
namespace {

std::string shape_text(at::IntArrayRef sizes) {
  std::ostringstream text;
  text << sizes;
  return text.str();
}

std::string index_text(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> index(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    index[d] = sizes[d] == 0 ? 0 : flat % sizes[d];
    flat = sizes[d] == 0 ? 0 : flat / sizes[d];
  }
  std::ostringstream text;
  text << at::IntArrayRef(index);
  return text.str();
}

}  // namespace

double machine_epsilon(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf:
    case at::kComplexHalf:
      return 9.765625e-4;  // 2^-10
    case at::kBFloat16:
      return 7.8125e-3;  // 2^-7
    case at::kFloat:
    case at::kComplexFloat:
      return 1.1920928955078125e-7;  // 2^-23
    default:
      return 2.220446049250313e-16;  // 2^-52
  }
}

namespace {

void compare_tensors(const at::Tensor& expected, const at::Tensor& actual, const std::string& path, CompareValues values,
                     double scale_ulps, Comparison& result) {
  auto fail = [&](const std::string& message) {
    result.equal = false;
    if (result.message.empty()) result.message = path + ": " + message;
  };
  if (expected.defined() != actual.defined()) return fail(std::string("expected ") + (expected.defined() ? "a tensor" : "an undefined tensor"));
  if (!expected.defined()) return;
  if (expected.sizes() != actual.sizes()) return fail("shape " + shape_text(actual.sizes()) + ", expected " + shape_text(expected.sizes()));
  if (expected.scalar_type() != actual.scalar_type()) {
    return fail(std::string("dtype ") + c10::toString(actual.scalar_type()) + ", expected " + c10::toString(expected.scalar_type()));
  }
  if (expected.device() != actual.device()) return fail("device " + actual.device().str() + ", expected " + expected.device().str());
  if (expected.layout() != actual.layout()) {
    std::ostringstream message;
    message << "layout " << actual.layout() << ", expected " << expected.layout();
    return fail(message.str());
  }
  if (values == CompareValues::kMetadataOnly) {
    if (expected.layout() == at::kStrided && expected.strides() != actual.strides()) {
      return fail("strides " + shape_text(actual.strides()) + ", expected " + shape_text(expected.strides()));
    }
    return;
  }
  if (expected.numel() == 0) return;
  if (expected.is_sparse()) return compare_tensors(expected.to_dense(), actual.to_dense(), path, values, scale_ulps, result);

  const at::ScalarType dtype = expected.scalar_type();
  // Fast path: identical tensors need no element-wise pass (NaNs make at::equal false).
  // (ATen's CPU equal has no complex-half kernel; those take the element-wise pass.)
  if (dtype != at::kComplexHalf && at::equal(expected, actual)) return;
  // Element-wise, as tensor operations where the outputs are (a GPU compares 100M elements in
  // milliseconds), in float64: complex numbers as their real and imaginary parts. Half and
  // bfloat16 in float32, half the bytes of every temporary: their values are exact there, a
  // difference of two of them is exact or rounded far below their tolerances (rtol 1e-3 and
  // 1.6e-2), and most TorchBench cases are half.
  at::Tensor want, got;
  if (at::isComplexType(dtype)) {
    want = at::view_as_real(expected.detach().to(at::kComplexDouble)).flatten();
    got = at::view_as_real(actual.detach().to(at::kComplexDouble)).flatten();
  } else {
    const at::ScalarType wide = dtype == at::kHalf || dtype == at::kBFloat16 ? at::kFloat : at::kDouble;
    want = expected.detach().to(wide).flatten();
    got = actual.detach().to(wide).flatten();
  }
  Tolerance tolerance = tolerance_for(dtype);
  if (scale_ulps > 0 && (at::isFloatingType(dtype) || at::isComplexType(dtype))) {
    tolerance.atol += scale_ulps * machine_epsilon(dtype) * want.abs().nan_to_num(0, 0, 0).max().item<double>();
  }
  const at::Tensor difference = (want - got).abs();
  const at::Tensor both_nan = want.isnan() & got.isnan();
  const at::Tensor infinite = want.isinf() | got.isinf();
  // NaN equals NaN; an infinity only the same infinity; otherwise atol + rtol·|expected|
  // (a NaN difference compares false, so a NaN on one side is a mismatch).
  const at::Tensor close =
      both_nan | at::where(infinite, want == got, difference <= tolerance.atol + tolerance.rtol * want.abs());
  const at::Tensor measurable = difference.isfinite();  // errors exclude NaN and infinite differences
  const at::Tensor finite_difference = at::where(measurable, difference, at::zeros_like(difference));
  const at::Tensor relative = at::where(measurable & (want != 0), finite_difference / want.abs(), at::zeros_like(difference));
  // The three figures read back together: one wait for the device, not three.
  const at::Tensor figures =
      at::stack({finite_difference.max().to(at::kDouble), relative.max().to(at::kDouble), (~close).sum().to(at::kDouble)}).cpu();
  const double* read = figures.data_ptr<double>();
  result.max_abs_error = std::max(result.max_abs_error, read[0]);
  result.max_rel_error = std::max(result.max_rel_error, read[1]);
  const auto mismatches = static_cast<int64_t>(read[2]);
  if (mismatches > 0) {
    const int64_t first = (~close).to(at::kByte).argmax().item<int64_t>();
    const int64_t element = at::isComplexType(dtype) ? first / 2 : first;
    std::ostringstream message;
    message << mismatches << " of " << want.numel() << " values differ beyond rtol=" << tolerance.rtol
            << " atol=" << tolerance.atol << "; first at index " << index_text(element, expected.sizes())
            << ": expected " << want[first].item<double>() << ", got " << got[first].item<double>();
    fail(message.str());
  }
}

void compare_values(const c10::IValue& expected, const c10::IValue& actual, const std::string& path, CompareValues values,
                    double scale_ulps, Comparison& result) {
  if (expected.isTensor()) {
    if (!actual.isTensor()) {
      result.equal = false;
      if (result.message.empty()) result.message = path + ": expected a tensor, got " + actual.tagKind();
      return;
    }
    return compare_tensors(expected.toTensor(), actual.toTensor(), path, values, scale_ulps, result);
  }
  if (expected.isTuple() || expected.isList()) {
    const std::vector<c10::IValue> want = expected.isTuple() ? expected.toTupleRef().elements().vec() : expected.toListRef().vec();
    if (!(actual.isTuple() || actual.isList())) {
      result.equal = false;
      if (result.message.empty()) result.message = path + ": expected a sequence, got " + actual.tagKind();
      return;
    }
    const std::vector<c10::IValue> got = actual.isTuple() ? actual.toTupleRef().elements().vec() : actual.toListRef().vec();
    if (want.size() != got.size()) {
      result.equal = false;
      if (result.message.empty()) result.message = path + ": " + std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
      return;
    }
    for (size_t i = 0; i < want.size(); ++i) compare_values(want[i], got[i], path + "[" + std::to_string(i) + "]", values, scale_ulps, result);
    return;
  }
  if (expected.isDouble() && actual.isDouble() && std::isnan(expected.toDouble()) && std::isnan(actual.toDouble())) return;
  if (!(expected == actual)) {
    std::ostringstream message;
    message << path << ": got " << actual << ", expected " << expected;
    result.equal = false;
    if (result.message.empty()) result.message = message.str();
  }
}

}  // namespace

Tolerance tolerance_for(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf:
    case at::kComplexHalf:
      return {1e-3, 1e-5};
    case at::kBFloat16:
      return {1.6e-2, 1e-5};
    case at::kFloat:
    case at::kComplexFloat:
      return {1.3e-6, 1e-5};
    case at::kDouble:
    case at::kComplexDouble:
      return {1e-7, 1e-7};
    default:
      return {0, 0};
  }
}

Comparison compare_outputs(const std::vector<c10::IValue>& expected, const std::vector<c10::IValue>& actual,
                           CompareValues values) {
  CompareOptions options;
  options.values = values;
  return compare_outputs(expected, actual, options);
}

Comparison compare_outputs(const std::vector<c10::IValue>& expected, const std::vector<c10::IValue>& actual,
                           const CompareOptions& options) {
  Comparison result;
  if (expected.size() != actual.size()) {
    result.equal = false;
    result.message = "returned " + std::to_string(actual.size()) + " values, expected " + std::to_string(expected.size());
    return result;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const bool metadata_only = std::find(options.metadata_only_outputs.begin(), options.metadata_only_outputs.end(), i) !=
                               options.metadata_only_outputs.end();
    compare_values(expected[i], actual[i], "output " + std::to_string(i),
                   metadata_only ? CompareValues::kMetadataOnly : options.values, options.scale_ulps, result);
  }
  return result;
}

CompareOptions compare_options_for(const OperatorFacts& facts) {
  CompareOptions options;
  options.values = facts.undefined_values ? CompareValues::kMetadataOnly : CompareValues::kYes;
  options.metadata_only_outputs = facts.undefined_outputs;
  options.scale_ulps = facts.accumulates_in_any_order ? kAccumulationUlps : 0;
  return options;
}

Comparison compare_with_second_chance(const std::vector<c10::IValue>& want, const std::vector<c10::IValue>& got, const CompareOptions& options,
                                      const std::function<const std::vector<c10::IValue>*()>& precise_want) {
  const Comparison first = compare_outputs(want, got, options);
  if (first.equal || !has_floating_tensor(want) || !precise_want) return first;
  const std::vector<c10::IValue>* precise = precise_want();
  if (precise == nullptr) return first;
  const Comparison second = compare_outputs(round_like(*precise, want), got, options);
  return second.equal ? second : first;
}

}  // namespace backendbench
