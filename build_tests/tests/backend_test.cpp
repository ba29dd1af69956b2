// Unit tests of backend.h: the registry and the built-in backends.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/backend.h"
#include "backendbench/score_group.h"
#include "supervisor/kernel_workers.h"
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

// The planner groups scores by the backend's name alone (score_group.h, without the registry):
// every registered backend's kind must give the group its name gives.
TEST(Backends, EachBackendsScoreGroupFollowsFromItsName) {
  for (const Backend* backend : backends().for_operator("relu.default", true)) {
    switch (backend->kind()) {
      case Backend::Kind::kReference: EXPECT_EQ(score_group(backend->name()), "") << backend->name(); break;
      case Backend::Kind::kCalibration: EXPECT_EQ(score_group(backend->name()), backend->name()); break;
      case Backend::Kind::kKernel: EXPECT_EQ(score_group(backend->name()), "kernels") << backend->name(); break;
    }
  }
  EXPECT_EQ(score_group("impl3"), "kernels");
  EXPECT_EQ(score_group("flag_gems"), "kernels");
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

TEST(Backends, DrawCallsRunInTurnOnWhatPrepareMadeAndNotWhenPrepareDecided) {
  class Counting : public Backend {
   public:
    Counting() : Backend("impl98", Kind::kKernel) {}
    c10::Device device(const Settings&) const override { return c10::Device(c10::kCPU); }
    Stack call(const c10::OperatorHandle&, Stack stack, c10::Device) const override {
      ++calls;
      return {stack[0].toTensor().neg()};
    }
    mutable int calls = 0;
  };
  const Counting backend;
  const c10::OperatorHandle relu = c10::Dispatcher::singleton().findSchemaOrThrow("aten::relu", "");
  const std::vector<InputDraw> draws = {{nullptr, 0, 0}, {nullptr, 1, 0}, {nullptr, 2, 0}};
  const std::unique_ptr<Backend::DrawCalls> calls = backend.call_draws(relu, c10::Device(c10::kCPU), draws);
  Stack first = {at::tensor({1.0, -2.0})}, second = {at::tensor({3.0})};
  const auto observed = calls->next([&] { return &first; });
  ASSERT_TRUE(observed.has_value());
  EXPECT_TRUE(observed->outputs.at(0).toTensor().equal(at::tensor({-1.0, 2.0})));
  EXPECT_EQ(backend.calls, 1);
  const auto then = calls->next([&] { return &second; });
  ASSERT_TRUE(then.has_value());
  EXPECT_TRUE(then->outputs.at(0).toTensor().equal(at::tensor({-3.0})));
  EXPECT_EQ(backend.calls, 2);
  // A case decided while preparing (its inputs could not be made, the reference skipped it):
  // nothing to return, and this backend's call is not made at all.
  EXPECT_FALSE(calls->next([] { return static_cast<Stack*>(nullptr); }));
  EXPECT_EQ(backend.calls, 2);
  EXPECT_THROW(calls->next([&] { return &first; }), std::logic_error) << "a draw past the ones given";
}

// A taken spare is replaced at once where cores are many (the new spare's start beside the job
// costs little there) and once the job is answered on a small machine, unless the setting says.
TEST(Backends, ATakenSpareIsReplacedAtOnceOnlyWhereCoresAreMany) {
  EXPECT_FALSE(replaces_spare_at_once(std::nullopt, 2));
  EXPECT_FALSE(replaces_spare_at_once(std::nullopt, 7));
  EXPECT_TRUE(replaces_spare_at_once(std::nullopt, 8));
  EXPECT_TRUE(replaces_spare_at_once(std::nullopt, 16));
  EXPECT_TRUE(replaces_spare_at_once(true, 2));
  EXPECT_FALSE(replaces_spare_at_once(false, 16));
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
