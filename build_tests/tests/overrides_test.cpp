// Unit tests of overrides.h: kernels registered with the dispatcher, the recursion rule,
// autograd through an override, removal, and the choice of kernels.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/overrides.h"

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

OverrideChoice choice(const std::string& op, c10::KernelFunction kernel) {
  return {op, "impl1", "overrides_test.cpp", c10::DispatchKey::CPU, std::move(kernel)};
}

template <auto* function>
c10::KernelFunction kernel_of() {
  return c10::KernelFunction::makeFromUnboxedRuntimeFunction(function);
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
  std::optional<c10::KernelFunction> dispatcher_kernel() const override { return kernel_of<&relu_by_clamp>(); }
};

TEST(Overrides, TheLowestNumberedKernelOfEachSelectedOperatorIsChosen) {
  BackendRegistry registry;
  registry.add(std::make_unique<FakeReference>());
  registry.add("relu.default", std::make_unique<FakeKernel>("impl2"));
  registry.add("relu.default", std::make_unique<FakeKernel>("impl1"));
  registry.add("add.Tensor", std::make_unique<FakeKernel>("impl3"));
  registry.add("add.out", std::make_unique<FakeKernel>("impl1"));
  auto chosen = [&](OverrideSelection selection) {
    std::vector<std::string> names;
    for (const OverrideChoice& each : choose_overrides(registry, selection)) names.push_back(each.op_display + " " + each.backend);
    return names;
  };
  EXPECT_EQ(chosen({}), (std::vector<std::string>{"add.Tensor impl3", "add.out impl1", "relu.default impl1"}));
  EXPECT_EQ(chosen({{"add"}, {}}), (std::vector<std::string>{"add.Tensor impl3", "add.out impl1"}));
  EXPECT_EQ(chosen({{}, {"add.out", "relu"}}), (std::vector<std::string>{"add.Tensor impl3"}));
}

}  // namespace
}  // namespace backendbench
