// Unit tests of overrides.h: kernels registered with the dispatcher, the recursion rule,
// autograd through an override, removal, and the choice of kernels.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <unistd.h>

#include <cmath>

#include "backendbench/files.h"
#include "backendbench/overrides.h"
#include "backendbench/verdict.h"

namespace backendbench {
namespace {

int relu_by_clamp_calls = 0;  // counted by the kernel itself, whoever registered it
at::Tensor relu_by_clamp(const at::Tensor& self) {
  ++relu_by_clamp_calls;
  return at::clamp_min(self, 0);
}
// A kernel that calls the operator it overrides: must get ATen's relu, not itself.
at::Tensor relu_calling_relu(const at::Tensor& self) { return at::relu(self) + 0; }
// A kernel of another operator that calls an overridden one.
at::Tensor sigmoid_calling_relu(const at::Tensor& self) { return at::relu(self) * 0 + 1 / (1 + at::exp(-self)); }

OverrideChoice choice(const std::string& op, DispatcherKernel kernel) {
  return {op, "impl1", "overrides_test.cpp", c10::DispatchKey::CPU, std::move(kernel)};
}

template <auto* function>
DispatcherKernel kernel_of() {
  return dispatcher_kernel_of<function>();
}

TEST(Overrides, EveryCallerRunsTheKernelUntilTheGuardIsGone) {
  const at::Tensor x = at::randn({64});
  {
    const OverrideGuard guard({choice("relu.default", kernel_of<&relu_by_clamp>())});
    EXPECT_TRUE(at::equal(at::relu(x), at::clamp_min(x, 0)));
    EXPECT_TRUE(at::equal(x.relu(), at::clamp_min(x, 0)));
    EXPECT_EQ(guard.calls().at("relu.default").kernel, 2);
    EXPECT_EQ(guard.registered(), (std::vector<std::string>{"relu.default impl1 on CPU (overrides_test.cpp)"}));
  }
  // ATen's own again: the kernel is not called any more.
  const int calls_before = relu_by_clamp_calls;
  EXPECT_TRUE(at::equal(at::relu(x), at::clamp_min(x, 0)));
  EXPECT_EQ(relu_by_clamp_calls, calls_before);
}

TEST(Overrides, AKernelCallingItsOwnOperatorGetsAtens) {
  const at::Tensor x = at::randn({64});
  const OverrideGuard guard({choice("relu.default", kernel_of<&relu_calling_relu>())});
  EXPECT_TRUE(at::equal(at::relu(x), at::clamp_min(x, 0)));  // no recursion, ATen's values
  EXPECT_EQ(guard.calls().at("relu.default").kernel, 1);
  EXPECT_EQ(guard.calls().at("relu.default").aten_inside_kernel, 1);
}

TEST(Overrides, AKernelCallingAnotherOverriddenOperatorGetsAtens) {
  const at::Tensor x = at::randn({64});
  const OverrideGuard guard({choice("relu.default", kernel_of<&relu_calling_relu>()),
                             choice("sigmoid.default", kernel_of<&sigmoid_calling_relu>())});
  EXPECT_TRUE(at::allclose(at::sigmoid(x), 1 / (1 + at::exp(-x))));
  EXPECT_EQ(guard.calls().at("sigmoid.default").kernel, 1);
  EXPECT_EQ(guard.calls().at("relu.default").kernel, 0);  // not our relu: ATen's, inside sigmoid's kernel
  EXPECT_EQ(guard.calls().at("relu.default").aten_inside_kernel, 1);
}

TEST(Overrides, AutogradStillWorks) {
  at::Tensor x = at::randn({64});
  x.set_requires_grad(true);
  const OverrideGuard guard({choice("relu.default", kernel_of<&relu_by_clamp>())});
  const at::Tensor y = at::relu(x);
  ASSERT_TRUE(y.requires_grad());
  y.sum().backward();
  EXPECT_TRUE(at::equal(x.grad(), (x > 0).to(at::kFloat)));
  EXPECT_EQ(guard.calls().at("relu.default").kernel, 1);
}

TEST(Overrides, AnUnknownOperatorLeavesNothingRegistered) {
  const at::Tensor x = at::randn({8});
  EXPECT_THROW(OverrideGuard({choice("relu.default", kernel_of<&relu_by_clamp>()),
                              choice("no_such_operator.default", kernel_of<&relu_by_clamp>())}),
               std::runtime_error);
  const int calls_before = relu_by_clamp_calls;
  (void)at::relu(x);  // were the relu override left behind, this would call it
  EXPECT_EQ(relu_by_clamp_calls, calls_before);
}

class FakeReference : public Backend {
 public:
  FakeReference() : Backend("aten", Kind::kReference) {}
  c10::Device device(const Settings&) const override { return c10::Device(c10::kCPU); }
  Stack call(const c10::OperatorHandle&, Stack stack, c10::Device) const override { return stack; }
};

class FakeKernel : public Backend {
 public:
  explicit FakeKernel(std::string name) : Backend(std::move(name), Kind::kKernel) {}
  c10::Device device(const Settings&) const override { return c10::Device(c10::kCPU); }
  Stack call(const c10::OperatorHandle&, Stack stack, c10::Device) const override { return stack; }
  std::string source() const override { return "fake.cpp"; }
  std::optional<DispatcherKernel> dispatcher_kernel() const override { return kernel_of<&relu_by_clamp>(); }
};

// A registry with relu impl1 and impl2, add.Tensor impl3 and add.out impl1.
BackendRegistry example_registry() {
  BackendRegistry registry;
  registry.add(std::make_unique<FakeReference>());
  registry.add("relu.default", std::make_unique<FakeKernel>("impl2"));
  registry.add("relu.default", std::make_unique<FakeKernel>("impl1"));
  registry.add("add.Tensor", std::make_unique<FakeKernel>("impl3"));
  registry.add("add.out", std::make_unique<FakeKernel>("impl1"));
  return registry;
}

std::vector<std::string> chosen(const OverridePlan& plan) {
  std::vector<std::string> names;
  for (const OverrideChoice& each : plan.choices) names.push_back(each.op_display + " " + each.backend);
  return names;
}

KernelRecord record(int cases, std::vector<std::string> failures, std::vector<double> speedups = {}) {
  KernelRecord made;
  made.cases = cases;
  made.failures = std::move(failures);
  for (double speedup : speedups) made.log_speedup_sum += std::log(speedup);
  made.timed = static_cast<int>(speedups.size());
  return made;
}

TEST(Overrides, WithoutResultsTheLowestNumberedKernelIsChosenUnverified) {
  const BackendRegistry registry = example_registry();
  const OverridePlan all = choose_overrides(registry, {});
  EXPECT_EQ(chosen(all), (std::vector<std::string>{"add.Tensor impl3", "add.out impl1", "relu.default impl1"}));
  ASSERT_EQ(all.warnings.size(), 3u);
  EXPECT_NE(all.warnings[2].find("relu.default impl1 (fake.cpp) has no results yet; registered unverified"), std::string::npos);
  EXPECT_EQ(chosen(choose_overrides(registry, {{"add"}, {}})), (std::vector<std::string>{"add.Tensor impl3", "add.out impl1"}));
  EXPECT_EQ(chosen(choose_overrides(registry, {{}, {"add.out", "relu"}})), (std::vector<std::string>{"add.Tensor impl3"}));
}

TEST(Overrides, TheFastestPassingKernelIsChosenAndAFailingOneNever) {
  const BackendRegistry registry = example_registry();
  OverrideSelection selection;
  selection.include = {"relu"};
  selection.records[{"relu.default", "impl1"}] = record(4, {}, {1.1, 0.9});
  selection.records[{"relu.default", "impl2"}] = record(4, {}, {2.0, 1.5});
  EXPECT_EQ(chosen(choose_overrides(registry, selection)), (std::vector<std::string>{"relu.default impl2"}));
  selection.records[{"relu.default", "impl2"}] = record(4, {"smoke f32_2: output 0: 2 of 2 values differ"}, {9.0});
  const OverridePlan plan = choose_overrides(registry, selection);
  EXPECT_EQ(chosen(plan), (std::vector<std::string>{"relu.default impl1"}));
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0], "relu.default impl2 (fake.cpp) failed 1 of 4 cases, first smoke f32_2: output 0: 2 of 2 "
                              "values differ; not registered");
}

TEST(Overrides, AFailingKernelIsRegisteredOnlyWhenForced) {
  const BackendRegistry registry = example_registry();
  OverrideSelection selection;
  selection.include = {"relu"};
  selection.records[{"relu.default", "impl1"}] = record(2, {"edge nan: expected nan, got 0"});
  selection.records[{"relu.default", "impl2"}] = record(2, {"edge inf: expected inf, got 0"});
  const OverridePlan refused = choose_overrides(registry, selection);
  EXPECT_TRUE(refused.choices.empty());
  ASSERT_EQ(refused.warnings.size(), 2u);
  EXPECT_NE(refused.warnings[0].find("not registered (force it to register it anyway)"), std::string::npos);
  selection.force_failing = true;
  const OverridePlan forced = choose_overrides(registry, selection);
  EXPECT_EQ(chosen(forced), (std::vector<std::string>{"relu.default impl1"}));
  EXPECT_NE(forced.warnings[0].find("registered all the same (forced)"), std::string::npos);
}

TEST(Overrides, RecordsAreReadFromAResultsFolder) {
  const std::string folder = files::temporary_directory() + "/bb_records_" + std::to_string(::getpid());
  files::remove_tree(folder);
  Verdict passed;
  passed.suite = "smoke";
  passed.op = "relu.default";
  passed.backend = "impl1";
  passed.case_name = "f32_2";
  Verdict timed = passed;
  timed.timing = TimingFigures();
  timed.timing->speedup = 2.0;
  Verdict failed = passed;
  failed.backend = "impl2";
  failed.status = Verdict::Status::kFailed;
  failed.errors = {"output 0 differs"};
  Verdict skipped = failed;
  skipped.status = Verdict::Status::kSkipped;
  auto file_of = [&](const Verdict& verdict) {
    return folder + "/smoke/relu.default/" + verdict.backend + ".verdicts.jsonl";
  };
  start_verdicts(file_of(passed));
  start_verdicts(file_of(failed));
  for (const Verdict& verdict : {passed, timed, failed, skipped}) append_verdict(file_of(verdict), verdict);
  const KernelRecords records = read_kernel_records(folder);
  const KernelRecord& first = records.at({"relu.default", "impl1"});
  EXPECT_EQ(first.cases, 2);
  EXPECT_TRUE(first.passed());
  EXPECT_EQ(first.timed, 1);
  const KernelRecord& second = records.at({"relu.default", "impl2"});
  EXPECT_EQ(second.cases, 1);  // the skip does not count
  EXPECT_EQ(second.failures, (std::vector<std::string>{"smoke f32_2: output 0 differs"}));
  EXPECT_TRUE(read_kernel_records(folder + "/missing").empty());
  files::remove_tree(folder);
}

}  // namespace
}  // namespace backendbench
