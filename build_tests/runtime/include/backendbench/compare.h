// Output comparison: recursive over tuples and lists, tensors by layout, shape, dtype, device
// and values, with torch.testing.assert_close's tolerances per dtype.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

namespace backendbench {

struct Tolerance {
  double rtol;
  double atol;
};
// torch.testing.assert_close's defaults per dtype; integers and bool compare exactly.
Tolerance tolerance_for(at::ScalarType dtype);
// The spacing of the dtype's numbers at 1.0 (complex: of its parts).
double machine_epsilon(at::ScalarType dtype);

struct Comparison {
  bool equal = true;
  std::string message;  // what differs, where; empty when equal
  double max_abs_error = 0;
  double max_rel_error = 0;
};
enum class CompareValues { kYes, kMetadataOnly };

struct CompareOptions {
  CompareValues values = CompareValues::kYes;
  std::vector<size_t> metadata_only_outputs;  // positions compared as with kMetadataOnly
  double scale_ulps = 0;  // >0: extra atol of scale_ulps × eps(dtype) × max|expected| (accumulations)
};
// Recursive: tensors by layout, shape, dtype, device and values (NaN equals NaN; sparse
// tensors as dense); tuples and lists element-wise; scalars exactly. kMetadataOnly (outputs
// with undefined values) compares tensors by layout, shape, dtype, device and strides.
Comparison compare_outputs(const std::vector<c10::IValue>& expected, const std::vector<c10::IValue>& actual,
                           CompareValues values = CompareValues::kYes);
Comparison compare_outputs(const std::vector<c10::IValue>& expected, const std::vector<c10::IValue>& actual,
                           const CompareOptions& options);

struct OperatorFacts;  // operator_facts.h

// `got` against `want`; a value that misses gets a second chance against the float64 reference
// (`precise_want`, rounded to `want`'s dtypes): ATen's own low-precision result is not always
// the most accurate one. Shared by the checks that compare values and by timing (measure.h).
Comparison compare_with_second_chance(const std::vector<c10::IValue>& want, const std::vector<c10::IValue>& got,
                                      const CompareOptions& options,
                                      const std::function<const std::vector<c10::IValue>*()>& precise_want);
CompareOptions compare_options_for(const OperatorFacts& facts);

}  // namespace backendbench
