// Unit tests of run_case.h: check_case on backends registered by the test, each cheating in
// one way, and the verdict it returns.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <chrono>
#include <map>
#include <thread>

#include "backendbench/inputs.h"
#include "backendbench/measure.h"
#include "supervisor/run_case.h"
#include "supervisor/run_job.h"
#include "backendbench/timing.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

class FunctionBackend : public Backend {
 public:
  FunctionBackend(std::string name, std::function<Stack(Stack)> body)
      : Backend(std::move(name), Kind::kKernel), body_(std::move(body)) {}
  c10::Device device(const Settings&) const override { return c10::Device(c10::kCPU); }
  std::string source() const override { return "test.cpp"; }
  Stack call(const c10::OperatorHandle&, Stack stack, c10::Device) const override { return body_(std::move(stack)); }

 private:
  std::function<Stack(Stack)> body_;
};

const CaseSpec kCase = {"f32_64", "((T([64], f32),), {})", "t.txt", 3, 11, 1, "m"};

Settings settings_with_salt(uint64_t salt) {
  Settings settings;
  settings.salt = salt;
  settings.salt_given = true;
  return settings;
}

TEST(CheckCase, ACorrectKernelPassesEveryDraw) {
  const FunctionBackend honest("impl1", [](Stack s) { return Stack{s[0].toTensor().clamp_min(0)}; });
  const Verdict verdict = check_case(kRelu, kCase, honest, settings_with_salt(5));
  EXPECT_TRUE(verdict.passed()) << (verdict.errors.empty() ? "" : verdict.errors[0]);
  EXPECT_EQ(verdict.draws, 2);
  EXPECT_EQ(verdict.salt, 5u);
  EXPECT_EQ(verdict.kernel_file, "test.cpp");
  EXPECT_FALSE(verdict.checks.empty());
}

TEST(DeviceMismatch, ACpuKernelInARunThatAsksForCudaIsSaid) {
  const FunctionBackend cpu_kernel("impl1", [](Stack s) { return s; });
  Settings settings;
  EXPECT_EQ(device_mismatch_warning(cpu_kernel, settings), "") << "no device asked for";
  settings.device = c10::Device(c10::kCPU);
  EXPECT_EQ(device_mismatch_warning(cpu_kernel, settings), "") << "it runs where asked";
  settings.device = c10::Device(c10::kCUDA, 0);
  const std::string warning = device_mismatch_warning(cpu_kernel, settings);
  EXPECT_NE(warning.find("impl1 (test.cpp) runs on the CPU, though the run asks for cuda:0"), std::string::npos) << warning;
}

TEST(CheckCase, ARememberedResultFailsOnTheSecondDraw) {
  auto remembered = std::make_shared<at::Tensor>();
  const FunctionBackend caching("impl2", [remembered](Stack s) {
    if (!remembered->defined()) *remembered = s[0].toTensor().clamp_min(0);
    return Stack{remembered->clone()};
  });
  const Verdict verdict = check_case(kRelu, kCase, caching, settings_with_salt(5));
  EXPECT_EQ(verdict.status, Verdict::Status::kFailed);
  EXPECT_EQ(verdict.failed_draw, 2);
  ASSERT_FALSE(verdict.errors.empty());
  EXPECT_NE(verdict.errors[0].find("(draw 2 of 2)"), std::string::npos) << verdict.errors[0];
}

TEST(CheckCase, AnswersPrecomputedForOneSaltFailUnderAnother) {
  // Precomputed for salt 5: right there, wrong with any other salt.
  const std::vector<at::Tensor> precomputed = {
      materialize(find_operator(kRelu).schema(), kCase, c10::Device(c10::kCPU), 0, 5)[0].toTensor().clamp_min(0),
      materialize(find_operator(kRelu).schema(), kCase, c10::Device(c10::kCPU), 1, 5)[0].toTensor().clamp_min(0)};
  auto calls = std::make_shared<int>(0);
  const FunctionBackend lookup("impl3", [precomputed, calls](Stack) { return Stack{precomputed[(*calls)++ % 2].clone()}; });
  EXPECT_TRUE(check_case(kRelu, kCase, lookup, settings_with_salt(5)).passed());
  *calls = 0;
  EXPECT_FALSE(check_case(kRelu, kCase, lookup, settings_with_salt(6)).passed());
}

TEST(CheckCase, ChangedGlobalStateFailsAndIsRestored) {
  const bool grad = c10::GradMode::is_enabled();
  const FunctionBackend toggling("impl4", [](Stack s) {
    c10::GradMode::set_enabled(!c10::GradMode::is_enabled());
    return Stack{s[0].toTensor().clamp_min(0)};
  });
  const Verdict verdict = check_case(kRelu, kCase, toggling, settings_with_salt(5));
  EXPECT_EQ(verdict.status, Verdict::Status::kFailed);
  EXPECT_NE(verdict.errors[0].find("changed global state the reference depends on: grad mode"), std::string::npos)
      << verdict.errors[0];
  EXPECT_EQ(c10::GradMode::is_enabled(), grad);  // restored for later cases
}

TEST(CheckCase, AThreadLeftWritingTheOutputFails) {
  const FunctionBackend detached("impl5", [](Stack s) {
    at::Tensor input = s[0].toTensor().clone();
    at::Tensor output = at::empty_like(input);
    std::thread([input, output]() mutable {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      output.copy_(input.clamp_min(0));
    }).detach();
    return Stack{output};
  });
  const Verdict verdict = check_case(kRelu, kCase, detached, settings_with_salt(5));
  EXPECT_EQ(verdict.status, Verdict::Status::kFailed);
  bool named = false;
  for (const std::string& error : verdict.errors) named = named || error.find("thread(s) running") != std::string::npos;
  EXPECT_TRUE(named);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // let it finish before the next test
}

TEST(CheckCase, AnExceptionNamesTheBackendAndTheCase) {
  const FunctionBackend throwing("impl6", [](Stack) -> Stack { throw std::runtime_error("not written yet"); });
  const Verdict verdict = check_case(kRelu, kCase, throwing, settings_with_salt(5));
  ASSERT_EQ(verdict.errors.size(), 1u);
  EXPECT_NE(verdict.errors[0].find("impl6 (test.cpp) threw on relu.default case f32_64"), std::string::npos);
  EXPECT_NE(verdict.errors[0].find("not written yet"), std::string::npos);
}

TEST(CheckCase, TheReferenceRunsOneDrawAndPasses) {
  const Verdict verdict = check_case(kRelu, kCase, backends().reference(), settings_with_salt(5));
  EXPECT_TRUE(verdict.passed());
  EXPECT_EQ(verdict.draws, 1);
}

TEST(CheckCase, ACudaBackendWithoutADeviceIsSkipped) {
  if (cuda_available()) GTEST_SKIP() << "this machine has a CUDA device";
  class CudaBackend : public FunctionBackend {
   public:
    CudaBackend() : FunctionBackend("impl7", [](Stack s) { return s; }) {}
    c10::Device device(const Settings&) const override { return c10::Device(c10::kCUDA, 0); }
  } cuda;
  const Verdict verdict = check_case(kRelu, kCase, cuda, Settings());
  EXPECT_EQ(verdict.status, Verdict::Status::kSkipped);
  EXPECT_EQ(verdict.skip_reason, "impl7 is a CUDA kernel and this machine has no CUDA device");
}

TEST(TimeCase, AKernelWrongOnlyWhenTimedFails) {
  // Right for the first two calls (the two draws check_case makes), then a stale answer.
  auto calls = std::make_shared<int>(0);
  auto stale = std::make_shared<at::Tensor>();
  const FunctionBackend cheat("impl8", [calls, stale](Stack s) {
    if (++*calls <= 2 || !stale->defined()) {
      *stale = s[0].toTensor().clamp_min(0);
      return Stack{stale->clone()};
    }
    return Stack{stale->clone()};
  });
  Settings settings = settings_with_salt(5);
  settings.stopping.min_samples = 8;
  settings.stopping.max_samples = 16;
  Timer timer(c10::Device(c10::kCPU), settings.stopping, settings.layout);
  const Verdict verdict = time_case(kRelu, kCase, cheat, settings, timer);
  EXPECT_EQ(verdict.status, Verdict::Status::kFailed);
  EXPECT_TRUE(verdict.has_flag("wrong_when_timed"));
  // A cache keyed on the input's address: stale once values change at the same address (the
  // allocator may already reuse one between check_case's draws; in timing it always happens).
  auto cache = std::make_shared<std::map<const void*, at::Tensor>>();
  const FunctionBackend by_pointer("impl10", [cache](Stack s) {
    const at::Tensor input = s[0].toTensor();
    auto found = cache->find(input.const_data_ptr());
    if (found == cache->end()) found = cache->emplace(input.const_data_ptr(), input.clamp_min(0)).first;
    return Stack{found->second.clone()};
  });
  const Verdict pointer_verdict = time_case(kRelu, kCase, by_pointer, settings, timer);
  EXPECT_EQ(pointer_verdict.status, Verdict::Status::kFailed);
  const FunctionBackend honest("impl9", [](Stack s) { return Stack{s[0].toTensor().clamp_min(0)}; });
  const Verdict fine = time_case(kRelu, kCase, honest, settings, timer);
  EXPECT_TRUE(fine.passed()) << (fine.errors.empty() ? "" : fine.errors[0]);
  ASSERT_TRUE(fine.timing.has_value());
  EXPECT_GT(fine.timing->speedup, 0);
}

TEST(TimeCase, SaysWhereItsTimeWent) {
  const FunctionBackend honest("impl9", [](Stack s) { return Stack{s[0].toTensor().clamp_min(0)}; });
  Settings settings = settings_with_salt(5);
  settings.stopping.min_samples = 8;
  settings.stopping.max_samples = 16;
  Timer timer(c10::Device(c10::kCPU), settings.stopping, settings.layout);
  const auto started = std::chrono::steady_clock::now();
  const Verdict verdict = time_case(kRelu, kCase, honest, settings, timer);
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(verdict.passed()) << (verdict.errors.empty() ? "" : verdict.errors[0]);
  ASSERT_TRUE(verdict.time_spent.has_value());
  EXPECT_GT(verdict.time_spent->checks_ms, 0);
  EXPECT_GT(verdict.time_spent->measurement_ms, 0);
  EXPECT_LE(verdict.time_spent->checks_ms + verdict.time_spent->measurement_ms, wall_ms);
  EXPECT_EQ(verdict.time_spent->bound_ms, 0);  // timed in this process: nothing to bound
  // A case its checks fail is not timed: its checks alone.
  const FunctionBackend wrong("impl11", [](Stack s) { return Stack{s[0].toTensor().clone()}; });
  const Verdict failed = time_case(kRelu, kCase, wrong, settings, timer);
  ASSERT_EQ(failed.status, Verdict::Status::kFailed);
  ASSERT_TRUE(failed.time_spent.has_value());
  EXPECT_GT(failed.time_spent->checks_ms, 0);
  EXPECT_EQ(failed.time_spent->measurement_ms, 0);
}

// Outputs of `bytes` bytes (float32), each batch's number as its value.
Stack batch_output(int batch, int64_t bytes) { return Stack{at::full({bytes / 4}, static_cast<float>(batch))}; }

std::vector<int> batches_of(const std::vector<TimedOutput>& kept) {
  std::vector<int> batches;
  for (const TimedOutput& output : kept) batches.push_back(output.batch);
  return batches;
}

TEST(TimedOutputSampler, KeepsEveryBatchThatFits) {
  TimedOutputSampler sampler(10 * 400);
  for (int batch = 0; batch < 5; ++batch) sampler.offer(batch, batch % 2, batch_output(batch, 400));
  const std::vector<TimedOutput> kept = sampler.take();
  EXPECT_EQ(batches_of(kept), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(kept[3].value_set, 1u);
  EXPECT_EQ(kept[3].outputs[0].toTensor()[0].item<float>(), 3.0f);
}

TEST(TimedOutputSampler, PastItsBudgetThinsEvenlyAndKeepsTheLast) {
  TimedOutputSampler sampler(4 * 400);  // four batches' outputs
  for (int batch = 0; batch < 11; ++batch) sampler.offer(batch, 0, batch_output(batch, 400));
  // 0..3 fit; the fifth halves them to every second batch, the ninth... to every fourth; the
  // last batch always comes too.
  EXPECT_EQ(batches_of(sampler.take()), (std::vector<int>{0, 4, 8, 10}));
}

TEST(TimedOutputSampler, OutputsLargerThanTheBudgetKeepTheFirstAndTheLast) {
  TimedOutputSampler sampler(100);
  for (int batch = 0; batch < 6; ++batch) sampler.offer(batch, 0, batch_output(batch, 400));
  EXPECT_EQ(batches_of(sampler.take()), (std::vector<int>{0, 5}));
}

TEST(TimedOutputSampler, KeepsACopyNotTheKernelsTensor) {
  // A kernel that writes into the output it returned after the batch changes nothing kept.
  TimedOutputSampler sampler(1 << 20);
  const Stack output = batch_output(7, 64);
  sampler.offer(0, 0, output);
  output[0].toTensor().fill_(-1);
  EXPECT_EQ(sampler.take().at(0).outputs[0].toTensor()[0].item<float>(), 7.0f);
}

TEST(MeasureCase, InAWorkerKeepsTheTimedOutputsAndJudgesNothing) {
  // A kernel wrong whenever timed: measured as a kernel worker measures (outputs kept for the
  // supervisor), no flag is raised here, and every batch's last output is the wrong one.
  const FunctionBackend wrong("impl12", [](Stack s) { return Stack{s[0].toTensor().clone()}; });
  Settings settings = settings_with_salt(5);
  settings.stopping.min_samples = 8;
  settings.stopping.max_samples = 8;
  Timer timer(c10::Device(c10::kCPU), settings.stopping, settings.layout);
  const c10::OperatorHandle handle = find_operator(kRelu);
  const std::vector<Stack> value_sets = {materialize(handle.schema(), kCase, c10::Device(c10::kCPU), 0, 5),
                                         materialize(handle.schema(), kCase, c10::Device(c10::kCPU), 1, 5)};
  const Measurement kept = measure_case(kRelu.display, handle, wrong, c10::Device(c10::kCPU), value_sets, timer, "t", 1 << 20);
  EXPECT_TRUE(kept.errors.empty());
  EXPECT_TRUE(std::find(kept.flags.begin(), kept.flags.end(), "wrong_when_timed") == kept.flags.end());
  ASSERT_EQ(kept.timed_outputs.size(), 2u);  // 8 pairs in batches of 4
  for (const TimedOutput& output : kept.timed_outputs) {
    EXPECT_TRUE(at::equal(output.outputs[0].toTensor(), value_sets[output.value_set][0].toTensor()));
  }
  EXPECT_EQ(kept.timed_outputs[0].value_set, 0u);
  EXPECT_EQ(kept.timed_outputs[1].value_set, 1u);
  // In this process, the same kernel is judged here.
  const Measurement judged = measure_case(kRelu.display, handle, wrong, c10::Device(c10::kCPU), value_sets, timer, "t");
  EXPECT_TRUE(std::find(judged.flags.begin(), judged.flags.end(), "wrong_when_timed") != judged.flags.end());
  EXPECT_TRUE(judged.timed_outputs.empty());
}

}  // namespace
}  // namespace backendbench
