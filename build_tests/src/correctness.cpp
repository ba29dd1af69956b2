// The body of every generated correctness test.
#include "backendbench/correctness.h"

#include <iostream>
#include <sstream>

#include "backendbench/harness.h"
#include "backendbench/operator_policies.h"

namespace backendbench {

void PrintTo(const CaseSpec& spec, std::ostream* out) {
  *out << spec.name << " " << spec.arguments << " (" << spec.file << ":" << spec.line << ")";
}

void CorrectnessTest::run_correctness(const OperatorSpec& op, const CaseSpec& spec, const VariantSpec* variant) {
  RecordProperty("case_arguments", spec.arguments);
  RecordProperty("case_source", std::string(spec.file) + ":" + std::to_string(spec.line));
  RecordProperty("case_count", std::to_string(spec.count));
  if (spec.models != nullptr) RecordProperty("case_models", spec.models);
  const c10::Device device = device_of(variant);
  if (device.is_cuda() && !cuda_available()) {
    GTEST_SKIP() << (variant ? std::string(variant->name) + " is a CUDA kernel" : std::string("BACKENDBENCH_DEVICE is cuda"))
                 << " and this machine has no CUDA device";
  }
  if (auto reason = device_limitation(op.display, c10::DeviceTypeName(device.type(), /*lower_case=*/true), spec.arguments)) {
    GTEST_SKIP() << "not run on " << device << ": " << *reason;
  }
  const std::string where = std::string(op.display) + " case " + spec.name + " " + spec.arguments + " (" + spec.file +
                            ":" + std::to_string(spec.line) + ")";
  c10::OperatorHandle handle = find_operator(op);
  std::vector<c10::IValue> reference_inputs, kernel_inputs;
  try {
    // One draw, two copies: identical values and layouts, separate storage.
    reference_inputs = materialize(handle.schema(), spec, device);
    kernel_inputs = clone_inputs(reference_inputs);
  } catch (const std::exception& error) {
    FAIL() << "cannot make inputs for " << where << ": " << error.what();
  }
  std::vector<c10::IValue> expected, actual;
  try {
    expected = call_reference(handle, std::move(reference_inputs));
  } catch (const c10::NotImplementedError& error) {
    // No kernel of this libtorch for these inputs on this device (e.g. a cuDNN-only operator
    // on the CPU): nothing to compare against, so the case is skipped, with the reason.
    GTEST_SKIP() << "the reference aten::" << op.display << " has no " << device << " kernel for " << where << ": "
                 << error.what_without_backtrace();
  } catch (const std::exception& error) {
    FAIL() << "the reference aten::" << op.display << " failed on " << where << ": " << error.what();
  }
  try {
    actual = variant ? call_kernel(handle, variant->factory(), std::move(kernel_inputs), device)
                     : call_reference(handle, std::move(kernel_inputs));
  } catch (const std::exception& error) {
    FAIL() << (variant ? std::string(variant->name) + " (" + variant->source + ")" : std::string("aten")) << " threw on "
           << where << ": " << error.what();
  }
  CompareOptions compare_options;
  compare_options.values = has_undefined_values(op.display) ? CompareValues::kMetadataOnly : CompareValues::kYes;
  compare_options.metadata_only_outputs = undefined_outputs(op.display);
  compare_options.scale_ulps = accumulates_in_any_order(op.display) ? kAccumulationUlps : 0;
  const Comparison comparison = compare_outputs(expected, actual, compare_options);
  RecordProperty("max_abs_error", std::to_string(comparison.max_abs_error));
  RecordProperty("max_rel_error", std::to_string(comparison.max_rel_error));
  // Also on stdout, so that CTest's JUnit (system-out) carries it, not only gtest's XML.
  std::cout << "[ errors   ] " << spec.name << " max_abs_error=" << comparison.max_abs_error
            << " max_rel_error=" << comparison.max_rel_error << " " << spec.arguments << "\n";
  EXPECT_TRUE(comparison.equal) << where << ": " << comparison.message << " (max abs error " << comparison.max_abs_error
                                << ", max rel error " << comparison.max_rel_error << ")";
}

}  // namespace backendbench
