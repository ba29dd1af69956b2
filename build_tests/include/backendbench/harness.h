// The harness core: turns a case's argument text into inputs for an operator's schema, runs
// the reference and a kernel, and compares their outputs.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <string>
#include <vector>

#include "backendbench/registry.h"

namespace backendbench {

// The operator's handle in the dispatcher; throws std::runtime_error if it is not registered.
c10::OperatorHandle find_operator(const OperatorSpec& op);

// Inputs for one call, in schema order (positional and keyword arguments, defaults filled).
// Tensor values are drawn from a generator seeded from the case's seed and `draw`, so the
// same (case, draw) always gets the same values and different draws independent ones; values
// the case spells out (values=[...]) are used as given. "cuda" devices in the arguments follow
// `device`. Throws std::invalid_argument naming the argument when the text does not fit.
std::vector<c10::IValue> materialize(const c10::FunctionSchema& schema, const CaseSpec& spec, c10::Device device,
                                     int draw = 0);

// A deep copy of inputs: every tensor gets its own storage with the same size, strides and
// offset (zero-stride views stay views), so the kernel cannot touch the reference's inputs.
std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& inputs);

// Every tensor in `values`, in order: tensors, tensor lists, Tensor?[] lists (None left out)
// and tuples of these, flattened. May include undefined tensors.
std::vector<at::Tensor> tensors_in(const std::vector<c10::IValue>& values);

// The inputs with every floating tensor converted to float64 (own storage); for a reference
// computed more precisely than in the inputs' own dtypes.
std::vector<c10::IValue> to_double_precision(const std::vector<c10::IValue>& inputs);
// `values` with each floating tensor converted to the dtype of its counterpart in `like`
// (recursively through lists and tuples): a float64 result rounded as the operator would.
std::vector<c10::IValue> round_like(const std::vector<c10::IValue>& values, const std::vector<c10::IValue>& like);

// Calls the operator through the dispatcher (the reference) or a kernel; returns outputs.
std::vector<c10::IValue> call_reference(const c10::OperatorHandle& op, std::vector<c10::IValue> inputs);
std::vector<c10::IValue> call_kernel(const c10::OperatorHandle& op, const c10::KernelFunction& kernel,
                                     std::vector<c10::IValue> inputs, c10::Device device);

struct Tolerance {
  double rtol;
  double atol;
};
// torch.testing.assert_close's defaults per dtype; integers and bool compare exactly.
Tolerance tolerance_for(at::ScalarType dtype);

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

// The device the aten backend runs on: BACKENDBENCH_DEVICE (cpu|cuda) or CUDA when available.
c10::Device default_device();
bool cuda_available();
c10::Device device_of(const VariantSpec* variant);  // nullptr: the aten backend

}  // namespace backendbench
