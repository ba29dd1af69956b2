// What the harness knows about particular operators, as data (operator_policies.cpp):
// - device limitations of ATen itself: inputs the reference cannot run on a device type; such
//   cases are skipped there with the documented reason, never silently;
// - operators whose output values are undefined (new_empty, ...): only metadata is compared.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace backendbench {

// The documented reason when aten::<op> cannot run these arguments on `device_type` ("cpu").
std::optional<std::string> device_limitation(const std::string& op_display, const std::string& device_type,
                                             const std::string& arguments);

// True for operators whose outputs have undefined values: compare shape, dtype, device and
// strides only.
bool has_undefined_values(const std::string& op_display);

// Positions of outputs with undefined contents (cuDNN's opaque reserve buffer): metadata only.
std::vector<size_t> undefined_outputs(const std::string& op_display);

// Arguments an operator writes although its schema does not mark them (a!): native_batch_norm
// updates running_mean and running_var in training mode. They are checked like written ones.
std::vector<std::string> unannotated_writes(const std::string& op_display);

// True for operators that return a view of an input although their schema has no alias
// annotation (_unsafe_view: a view that autograd treats as a new tensor); the no-alias check
// of outputs does not apply to them.
bool returns_unannotated_alias(const std::string& op_display);

// True for operators that accumulate many terms into one output element in no fixed order
// (atomics on CUDA): their low-precision results legitimately vary with the order, so values
// are compared with an extra absolute tolerance of kAccumulationUlps × eps(dtype) × max|expected|.
bool accumulates_in_any_order(const std::string& op_display);
constexpr double kAccumulationUlps = 16;

}  // namespace backendbench
