// The one table of per-operator knowledge (operator_facts.cpp): one row per operator that needs
// one, keyed by its display name (add.Tensor). Operator names appear nowhere else in the
// runtime. What libtorch knows by itself (tags, alias annotations) is read from libtorch
// instead (e.g. random operators by the nondeterministic_seeded tag, in the generator).
//
// A row holds:
// - device limitations of ATen itself: inputs the reference cannot run on a device type; such
//   cases are skipped there with the documented reason, never silently;
// - whether the outputs' values are undefined (new_empty, ...): only metadata is compared;
// - outputs with undefined contents (cuDNN's opaque reserve buffer);
// - arguments written although the schema does not mark them (a!);
// - whether an output is a view of an input although the schema has no alias annotation;
// - whether many terms are accumulated into one output element in no fixed order (atomics);
// - the FLOP formula of matrix products and convolutions;
// - index rules: valid values for index-like arguments (index_rules.h).
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "backendbench/index_rules.h"

namespace backendbench {

struct DeviceLimitation {
  const char* device_type;  // "cpu", "cuda"
  const char* arguments;    // ECMAScript regex over the canonical argument text
  const char* reason;
};

enum class FlopFormula {
  kPerElement,  // 1 per element of the largest tensor: elementwise operators and reductions
  kMm,
  kAddmm,
  kBmm,
  kBaddbmm,
  kConvolution,
  kConvolutionBackward,
};

struct OperatorFacts {
  std::string op;  // display name; "" for the row of operators with no facts
  std::vector<DeviceLimitation> device_limitations;
  bool undefined_values = false;
  std::vector<size_t> undefined_outputs;
  std::vector<std::string> unannotated_writes;
  bool returns_unannotated_alias = false;
  bool accumulates_in_any_order = false;
  FlopFormula flops = FlopFormula::kPerElement;
  std::vector<IndexRule> index_rules;
};

// The operator's row, or an empty one.
const OperatorFacts& facts_of(const std::string& op_display);

// Whether an ATen operator (aten::name.overload) only allocates, views, fills or copies,
// computing nothing of a result: a kernel may call it under --kernels-must-compute, and its
// time is not ATen's work in the kernel's ATen share (observe.h).
bool computes_nothing(const std::string& aten_name);

// Accumulating operators' values are compared with an extra absolute tolerance of
// kAccumulationUlps × eps(dtype) × max|expected|: their low-precision results legitimately
// vary with the summation order.
constexpr double kAccumulationUlps = 16;

// The documented reason when the operator cannot run these arguments on `device_type` ("cpu").
std::optional<std::string> device_limitation(const OperatorFacts& facts, const std::string& device_type,
                                             const std::string& arguments);

// The documented reason when the operator can run these inputs on `device` but too slowly to be
// checked: f16 matrix products and convolutions on the CPU, which ATen computes at about
// 3 GFLOP/s per core where the CPU has no f16 arithmetic, above `gflop_limit` per call (0: no
// limit; Settings::cpu_f16_gflop_limit).
std::optional<std::string> device_cost_limitation(const OperatorFacts& facts, c10::Device device,
                                                  const std::vector<c10::IValue>& inputs, double gflop_limit);

}  // namespace backendbench
