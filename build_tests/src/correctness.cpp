// The body of every generated correctness test.
#include "backendbench/correctness.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>

#include "backendbench/checks.h"
#include "backendbench/harness.h"
#include "backendbench/operator_policies.h"

namespace backendbench {

namespace {

// "<case name> <argument text> (<trace file>:<line>)": how messages name a case.
std::string describe(const CaseSpec& spec) {
  return std::string(spec.name) + " " + spec.arguments + " (" + spec.file + ":" + std::to_string(spec.line) + ")";
}

bool has_floating_tensor(const std::vector<c10::IValue>& values) {
  const std::vector<at::Tensor> tensors = tensors_in(values);
  return std::any_of(tensors.begin(), tensors.end(),
                     [](const at::Tensor& tensor) { return tensor.defined() && at::isFloatingType(tensor.scalar_type()); });
}

}  // namespace

int draws_per_case() {
  static const int draws = [] {
    const char* requested = std::getenv("BACKENDBENCH_DRAWS");
    const int parsed = requested ? std::atoi(requested) : 0;
    return parsed > 0 ? parsed : kDefaultDraws;
  }();
  return draws;
}

void PrintTo(const CaseSpec& spec, std::ostream* out) { *out << describe(spec); }

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
  // A kernel runs on several independent draws of each case, so that one which returns
  // remembered results (a cache keyed on shapes, a static output) fails; the aten backend is
  // the reference itself and one draw validates the harness.
  const int draws = variant ? draws_per_case() : 1;
  for (int draw = 0; draw < draws && !HasFailure() && !IsSkipped(); ++draw) {
    check_draw(op, spec, variant, device, draw, draws);
  }
}

void CorrectnessTest::check_draw(const OperatorSpec& op, const CaseSpec& spec, const VariantSpec* variant,
                                 c10::Device device, int draw, int draws) {
  const std::string where = std::string(op.display) + " case " + describe(spec) +
                            (draws > 1 ? " (draw " + std::to_string(draw + 1) + " of " + std::to_string(draws) + ")" : "");
  c10::OperatorHandle handle = find_operator(op);
  std::vector<c10::IValue> reference_inputs, kernel_inputs;
  try {
    // One draw, two copies: identical values and layouts, separate storage.
    reference_inputs = materialize(handle.schema(), spec, device, draw);
    kernel_inputs = clone_inputs(reference_inputs);
  } catch (const std::exception& error) {
    FAIL() << "cannot make inputs for " << where << ": " << error.what();
  }
  if (auto reason = device_cost_limitation(op.display, device, reference_inputs)) {
    GTEST_SKIP() << "not run on " << device << ": " << *reason;
  }
  std::vector<c10::IValue> expected, actual;
  try {
    expected = call_reference(handle, reference_inputs);
  } catch (const c10::NotImplementedError& error) {
    // No kernel of this libtorch for these inputs on this device (e.g. a cuDNN-only operator
    // on the CPU): nothing to compare against, so the case is skipped, with the reason.
    GTEST_SKIP() << "the reference aten::" << op.display << " has no " << device << " kernel for " << where << ": "
                 << error.what_without_backtrace();
  } catch (const std::exception& error) {
    FAIL() << "the reference aten::" << op.display << " failed on " << where << ": " << error.what();
  }
  const std::string backend = variant ? std::string(variant->name) + " (" + variant->source + ")" : std::string("aten");
  const std::vector<c10::IValue> kernel_inputs_before = clone_inputs(kernel_inputs);  // to prove read-only inputs stay so
  std::vector<std::string> dispatched;
  try {
    if (variant) {
      const c10::KernelFunction kernel = variant->factory();
      dispatched = record_operator_calls([&] { actual = call_kernel(handle, kernel, kernel_inputs, device); });
    } else {
      actual = call_reference(handle, kernel_inputs);
    }
  } catch (const std::exception& error) {
    FAIL() << backend << " threw on " << where << ": " << error.what();
  }
  const c10::FunctionSchema& schema = handle.schema();
  if (variant) {
    const std::string fallback = find_fallback(schema, dispatched);
    EXPECT_TRUE(fallback.empty()) << backend << " falls back to ATen: it dispatches " << fallback
                                  << ", the operator it replaces, on " << where;
  }
  const std::string aliased = returns_unannotated_alias(op.display) ? "" : find_aliased_output(schema, kernel_inputs, actual);
  EXPECT_TRUE(aliased.empty()) << backend << " on " << where << ": " << aliased;
  const std::vector<size_t> written = written_arguments(schema, unannotated_writes(op.display));
  const std::string mutated = find_mutated_input(schema, written, kernel_inputs_before, kernel_inputs);
  EXPECT_TRUE(mutated.empty()) << backend << " on " << where << ": " << mutated;
  CompareOptions compare_options;
  compare_options.values = has_undefined_values(op.display) ? CompareValues::kMetadataOnly : CompareValues::kYes;
  compare_options.metadata_only_outputs = undefined_outputs(op.display);
  compare_options.scale_ulps = accumulates_in_any_order(op.display) ? kAccumulationUlps : 0;
  // ATen's own result in f16, bf16 or f32 may round differently from a kernel that computes
  // more precisely (f16 add with alpha rounds alpha*other to f16 first on the CPU). A value
  // that misses ATen's result gets a second chance against the reference computed in float64
  // from the same inputs and rounded to the output's dtype: it passes if close to either.
  bool tried_precise = false;
  std::vector<c10::IValue> precise_inputs, precise_outputs;  // empty: no float64 reference
  auto compute_precise = [&] {
    if (!tried_precise) {
      tried_precise = true;
      try {
        precise_inputs = to_double_precision(kernel_inputs_before);
        precise_outputs = call_reference(handle, precise_inputs);
      } catch (const std::exception&) {
        precise_outputs.clear();  // no float64 kernel for these inputs: ATen's result alone decides
      }
    }
    return !precise_outputs.empty();
  };
  auto compare_values = [&](const std::vector<c10::IValue>& want, const std::vector<c10::IValue>& got,
                            const CompareOptions& options, const std::function<std::vector<c10::IValue>()>& precise_want) {
    const Comparison first = compare_outputs(want, got, options);
    if (first.equal || !has_floating_tensor(want) || !compute_precise()) return first;
    const Comparison second = compare_outputs(round_like(precise_want(), want), got, options);
    return second.equal ? second : first;
  };
  CompareOptions written_options;
  written_options.scale_ulps = compare_options.scale_ulps;
  for (size_t index : written) {
    const Comparison in_place = compare_values({reference_inputs[index]}, {kernel_inputs[index]}, written_options,
                                               [&] { return std::vector<c10::IValue>{precise_inputs[index]}; });
    EXPECT_TRUE(in_place.equal) << backend << " on " << where << ": argument '" << schema.arguments()[index].name()
                                << "' is written in place, but not as the reference writes it: " << in_place.message;
  }
  if (!schema.returns().empty() && schema.returns()[0].alias_info() && schema.returns()[0].alias_info()->isWrite() &&
      !actual.empty() && actual[0].isTensor()) {
    const bool returns_self = !written.empty() && actual[0].toTensor().is_same(kernel_inputs[written[0]].toTensor());
    EXPECT_TRUE(returns_self) << backend << " on " << where << ": an in-place operator must return its argument '"
                              << (written.empty() ? std::string("self") : schema.arguments()[written[0]].name())
                              << "', not a new tensor";
  }
  const Comparison comparison = compare_values(expected, actual, compare_options, [&] { return precise_outputs; });
  if (draw == 0) {
    RecordProperty("max_abs_error", std::to_string(comparison.max_abs_error));
    RecordProperty("max_rel_error", std::to_string(comparison.max_rel_error));
  }
  // Also on stdout, so that CTest's JUnit (system-out) carries it, not only gtest's XML.
  std::cout << "[ errors   ] " << spec.name << " max_abs_error=" << comparison.max_abs_error
            << " max_rel_error=" << comparison.max_rel_error << " " << spec.arguments << "\n";
  EXPECT_TRUE(comparison.equal) << where << ": " << comparison.message << " (max abs error " << comparison.max_abs_error
                                << ", max rel error " << comparison.max_rel_error << ")";
}

}  // namespace backendbench
