// Unit tests of the checks (check.h, checks/): each check on a recorded call that should pass
// and one that should fail.
#include <gtest/gtest.h>

#include <limits>

#include <ATen/ATen.h>

#include "supervisor/check.h"
#include "backendbench/tensor_values.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

// A recorded call of `spec` on `arguments`, with the reference's results as the backend's:
// tests then change one thing.
struct Recorded {
  explicit Recorded(const OperatorSpec& spec, const char* arguments, const std::string& op_display)
      : handle(find_operator(spec)),
        record{handle.schema(), facts_of(op_display), backends().reference(),
               written_arguments(handle.schema(), facts_of(op_display).unannotated_writes)} {
    record.reference_inputs = inputs(spec, arguments);
    record.kernel_inputs_before = clone_inputs(record.reference_inputs);
    record.kernel_inputs = clone_inputs(record.reference_inputs);
    record.expected = aten_call(handle, record.reference_inputs);
    record.actual = aten_call(handle, record.kernel_inputs);
  }
  std::string run(const char* check) const { return find_check(check)->run(record).message; }

  c10::OperatorHandle handle;
  CallRecord record;
};

TEST(Checks, TheReferencesOwnCallPassesEveryCheck) {
  const Recorded call(kAdd, "((T([4, 8], f32), T([4, 8], f32)), {'alpha': 2})", "add.Tensor");
  for (const Check* check : registered_checks()) EXPECT_EQ(check->run(call.record).message, "") << check->name();
}

TEST(Checks, FallbackToTheReplacedOperatorOrAVariant) {
  Recorded call(kRelu, "((T([16], f32),), {})", "relu.default");
  call.record.inside.dispatched = {"aten::empty.memory_format", "aten::relu"};
  EXPECT_EQ(call.run("no_fallback"), "falls back to ATen: it dispatches aten::relu, the operator it replaces");
  call.record.inside.dispatched = {"aten::relu_"};
  EXPECT_NE(call.run("no_fallback"), "");
  call.record.inside.dispatched = {"aten::clamp_min", "aten::threshold"};  // relu written out
  EXPECT_EQ(call.run("no_fallback"), "");
  EXPECT_FALSE(find_check("no_fallback")->applies_to(backends().reference()));
}

TEST(Checks, AMutatedReadOnlyInput) {
  Recorded call(kRelu, "((T([16], f32),), {})", "relu.default");
  call.record.kernel_inputs[0].toTensor().clamp_min_(0);
  EXPECT_EQ(call.run("read_only_inputs"), "argument 'self' is read-only in the schema but the kernel changed it");
}

TEST(Checks, ComplexHalfInputsCanBeChecked) {
  Recorded call(kToCopy, "((T([4], c32),), {})", "_to_copy.default");
  EXPECT_EQ(call.run("read_only_inputs"), "");
  call.record.kernel_inputs[0] = call.record.kernel_inputs[0].toTensor() * 2;
  EXPECT_NE(call.run("read_only_inputs"), "");
}

TEST(Checks, AFunctionalOutputMustNotAliasAnInput) {
  Recorded call(kAdd, "((T([4], f32), T([4], f32)), {})", "add.Tensor");
  call.record.actual = {call.record.kernel_inputs[0].toTensor().view({2, 2}).view({4})};
  EXPECT_NE(call.run("no_alias").find("output 0 shares memory with argument 'self'"), std::string::npos);
}

TEST(Checks, InPlaceWritesAndReturn) {
  Recorded call(kAddInPlace, "((T([4], f32), T([4], f32)), {})", "add_.Tensor");
  EXPECT_EQ(call.run("written_arguments"), "");
  EXPECT_EQ(call.run("in_place_return"), "");
  call.record.actual = {call.record.kernel_inputs[0].toTensor().clone()};
  EXPECT_EQ(call.run("in_place_return"), "an in-place operator must return its argument 'self', not a new tensor");
  call.record.kernel_inputs[0].toTensor().zero_();
  EXPECT_NE(call.run("written_arguments").find("argument 'self' is written in place, but not as the reference"),
            std::string::npos);
}

TEST(Checks, OutputsReportErrors) {
  Recorded call(kRelu, "((T([16], f32),), {})", "relu.default");
  call.record.actual = {call.record.expected[0].toTensor() + 1};
  const CheckFinding finding = find_check("outputs")->run(call.record);
  EXPECT_NE(finding.message.find("16 of 16 values differ"), std::string::npos);
  EXPECT_NEAR(finding.max_abs_error, 1.0, 1e-6);
}

TEST(Checks, ChangedGlobalStateIsNamed) {
  Recorded call(kRelu, "((T([16], f32),), {})", "relu.default");
  GlobalState after = GlobalState::capture();
  after.grad_enabled = !after.grad_enabled;
  after.threads += 3;
  call.record.inside.state_changes = GlobalState::capture().differences(after);
  const std::string message = call.run("global_state");
  EXPECT_NE(message.find("grad mode"), std::string::npos) << message;
  EXPECT_NE(message.find("intra-op threads"), std::string::npos) << message;
}

TEST(Checks, ThreadsLeftRunning) {
  Recorded call(kRelu, "((T([16], f32),), {})", "relu.default");
  call.record.inside.threads_left = {4242};
  EXPECT_NE(call.run("threads_left").find("left 1 thread(s) running"), std::string::npos);
}

TEST(Checks, ConstantOutputsUnderTheTolerance) {
  // Values around 1e-7: all within f32's atol of zero, so zeros pass the value comparison.
  Recorded call(kAdd, "((T([64], f32), T([64], f32)), {})", "add.Tensor");
  const at::Tensor tiny = call.record.expected[0].toTensor() * 1e-7;
  call.record.expected = {tiny};
  call.record.actual = {at::zeros_like(tiny)};
  EXPECT_EQ(find_check("outputs")->run(call.record).message, "");  // the cheat passes values...
  EXPECT_NE(call.run("constant_outputs").find("is constant"), std::string::npos);  // ...not this
  call.record.expected = {at::full({64}, 1e-7)};  // a constant reference: a constant answer is right
  call.record.actual = {at::full({64}, 1e-7)};
  EXPECT_EQ(call.run("constant_outputs"), "");
}

TEST(Checks, ConstantOutputsInEachFloatingType) {
  // Judged in the output's own dtype (one pass): the same findings as in float64.
  Recorded call(kAdd, "((T([64], f32), T([64], f32)), {})", "add.Tensor");
  const at::Tensor spread = at::linspace(1e-4, 2e-4, 64);
  for (const at::ScalarType dtype : {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble}) {
    call.record.expected = {spread.to(dtype)};
    call.record.actual = {at::zeros({64}, dtype)};
    EXPECT_NE(call.run("constant_outputs").find("is constant"), std::string::npos) << dtype;
    // A NaN among constant values makes the output not constant, as it did in float64.
    at::Tensor with_nan = at::zeros({64}, dtype);
    with_nan[5] = std::numeric_limits<double>::quiet_NaN();
    call.record.actual = {with_nan};
    EXPECT_EQ(call.run("constant_outputs"), "") << dtype;
    // Signed zeros are one value.
    at::Tensor signed_zeros = at::zeros({64}, dtype);
    signed_zeros[7] = -0.0;
    call.record.actual = {signed_zeros};
    EXPECT_NE(call.run("constant_outputs").find("is constant"), std::string::npos) << dtype;
  }
}

}  // namespace
}  // namespace backendbench
