// What the harness knows about particular operators, as data (operator_policies.cpp):
// - device limitations of ATen itself: inputs the reference cannot run on a device type; such
//   cases are skipped there with the documented reason, never silently;
// - cases ATen runs too slowly on a device type to check (f16 matrix products on the CPU);
// - operators whose output values are undefined (new_empty, ...): only metadata is compared.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

namespace backendbench {

// The documented reason when aten::<op> cannot run these arguments on `device_type` ("cpu").
std::optional<std::string> device_limitation(const std::string& op_display, const std::string& device_type,
                                             const std::string& arguments);

// The documented reason when aten::<op> can run these inputs on `device` but too slowly to be
// checked: f16 matrix products and convolutions on the CPU, which ATen computes at about
// 3 GFLOP/s per core where the CPU has no f16 arithmetic, above
// BACKENDBENCH_CPU_F16_GFLOP_LIMIT GFLOP per call (default kCpuHalfGflopLimit; 0: no limit).
std::optional<std::string> device_cost_limitation(const std::string& op_display, c10::Device device,
                                                  const std::vector<c10::IValue>& inputs);
constexpr double kCpuHalfGflopLimit = 2;

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
