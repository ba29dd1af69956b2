// Unit tests of backend.h: the registry and the built-in backends.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/backend.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

TEST(Backends, TheReferenceComesFirstAndCalibrationOnlyWhenAsked) {
  const auto plain = backends().for_operator("relu.default", false);
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain.front(), &backends().reference());
  EXPECT_EQ(plain.front()->kind(), Backend::Kind::kReference);
  const auto calibrated = backends().for_operator("relu.default", true);
  ASSERT_EQ(calibrated.size(), plain.size() + 2);
  EXPECT_EQ(calibrated[calibrated.size() - 2]->name(), "aten_self");
  EXPECT_EQ(calibrated.back()->name(), "aten_twice");
}

TEST(Backends, AnotherBackendIsOneRegistration) {
  class Negating : public Backend {
   public:
    Negating() : Backend("impl99", Kind::kKernel) {}
    c10::Device device(const Settings&) const override { return c10::Device(c10::kCPU); }
    Stack call(const c10::OperatorHandle&, Stack stack, c10::Device) const override {
      return {stack[0].toTensor().neg()};
    }
  };
  backends().add("neg_test.default", std::make_unique<Negating>());
  const Backend* found = backends().find("neg_test.default", "impl99");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(backends().for_operator("neg_test.default", false).size(), 2u);
  EXPECT_EQ(backends().find("relu.default", "impl99"), nullptr);
  EXPECT_THROW(backends().add("neg_test.default", std::make_unique<Negating>()), std::runtime_error);
}

TEST(Backends, TheReferenceRunsTheAtenOverload) {
  auto stack = inputs(kAdd, "((T([8], f32), T([8], f32)), {'alpha': 2})");
  const at::Tensor expected = at::add(stack[0].toTensor(), stack[1].toTensor(), 2);
  const auto outputs = aten_call(find_operator(kAdd), stack);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_TRUE(at::equal(outputs[0].toTensor(), expected));
}

TEST(Backends, AMissingKernelLibraryNamesThePath) {
  try {
    load_kernel_library("/nonexistent/libkernel.so");
    FAIL();
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot load kernel library /nonexistent/libkernel.so"), std::string::npos);
  }
}

}  // namespace
}  // namespace backendbench
