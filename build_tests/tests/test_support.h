// Shared by the runtime's unit tests: operators as case tables name them, and their inputs.
#pragma once

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/backend.h"
#include "backendbench/cases.h"
#include "backendbench/inputs.h"

namespace backendbench::testing {

inline OperatorSpec op(const char* display, const char* schema_name, const char* overload) {
  return {"t", display, "x", schema_name, overload, nullptr, 0};
}

inline const OperatorSpec kAdd = op("add.Tensor", "aten::add", "Tensor");
inline const OperatorSpec kAddInPlace = op("add_.Tensor", "aten::add_", "Tensor");
inline const OperatorSpec kRelu = op("relu.default", "aten::relu", "");
inline const OperatorSpec kToCopy = op("_to_copy.default", "aten::_to_copy", "");
inline const OperatorSpec kSum = op("sum.dim_IntList", "aten::sum", "dim_IntList");
inline const OperatorSpec kMissing = op("frobnicate.default", "aten::frobnicate", "");

inline CaseSpec make_case(const char* arguments, uint64_t seed = 7) { return {"c", arguments, "t.txt", 1, seed, 1, "m"}; }

inline std::vector<c10::IValue> inputs(const OperatorSpec& spec, const char* arguments, uint64_t seed = 7) {
  return materialize(find_operator(spec).schema(), make_case(arguments, seed), c10::Device(c10::kCPU));
}

// The operator through the dispatcher, as the reference backend runs it.
inline std::vector<c10::IValue> aten_call(const c10::OperatorHandle& handle, std::vector<c10::IValue> stack) {
  return backends().reference().call(handle, std::move(stack), c10::Device(c10::kCPU));
}

}  // namespace backendbench::testing
