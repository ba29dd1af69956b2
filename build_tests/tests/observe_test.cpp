// Unit tests of observe.h: what is observed around a call.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"
#include "backendbench/settings.h"
#include "backendbench/tensor_values.h"
#include <ATen/Parallel.h>
#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/InlineStreamGuard.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

TEST(Fallback, RecordingIsThreadLocalAndStops) {
  const at::Tensor t = at::ones({4});
  const auto calls = record_operator_calls([&] { at::relu(t); }).dispatched;
  EXPECT_NE(std::find(calls.begin(), calls.end(), "aten::relu"), calls.end());
  at::relu(t);  // after recording: nothing is kept
  EXPECT_EQ(record_operator_calls([] {}).dispatched.size(), 0u);
}

TEST(Fallback, OperatorsOnAnotherThreadAreRecordedApart) {
  const at::Tensor t = at::ones({4});
  const OperatorCalls calls = record_operator_calls([&] {
    at::neg(t);
    std::thread([&] {
      at::relu(t);
      at::relu(t);
    }).join();
  });
  EXPECT_EQ(std::count(calls.dispatched.begin(), calls.dispatched.end(), "aten::relu"), 0);
  EXPECT_NE(std::find(calls.dispatched.begin(), calls.dispatched.end(), "aten::neg"), calls.dispatched.end());
  EXPECT_EQ(std::count(calls.dispatched_elsewhere.begin(), calls.dispatched_elsewhere.end(), "aten::relu"), 1);  // each once
  EXPECT_EQ(std::count(calls.dispatched_elsewhere.begin(), calls.dispatched_elsewhere.end(), "aten::neg"), 0);
  std::thread([&] { at::relu(t); }).join();  // after recording: nothing is kept
  EXPECT_TRUE(record_operator_calls([] {}).dispatched_elsewhere.empty());
}

TEST(AtenShare, OutermostComputingOperatorsAreNamedOnceAndTimed) {
  // Calls of a millisecond or more each, so that a descheduling between two of them (the suite's
  // other tests on the same cores) stays a small share of the whole: at 256x256 one such pause
  // once left a third of the time counted as computing.
  const at::Tensor t = at::randn({1024, 1024});
  const OperatorCalls composed = record_operator_calls([&] {
    at::Tensor out = at::empty_like(t);  // allocates: computes nothing
    for (int i = 0; i < 20; ++i) out = at::clamp_min(at::exp(t), 0);
  });
  EXPECT_EQ(composed.computing, (std::vector<std::string>{"aten::exp", "aten::clamp_min"}));
  EXPECT_GT(composed.computing_seconds, 0.5 * composed.seconds);
  EXPECT_LE(composed.computing_seconds, composed.seconds);

  // Work of its own (a loop over the values) and an allocation: ATen computes nothing.
  const OperatorCalls own = record_operator_calls([&] {
    at::Tensor out = at::empty_like(t);
    const float* in = t.const_data_ptr<float>();
    float* o = out.mutable_data_ptr<float>();
    for (int repeat = 0; repeat < 20; ++repeat) {
      for (int64_t i = 0; i < t.numel(); ++i) o[i] = in[i] > 0 ? in[i] : 0;
    }
  });
  EXPECT_TRUE(own.computing.empty());
  EXPECT_EQ(own.computing_seconds, 0);
  EXPECT_GT(own.seconds, 0);
}

TEST(InputChecks, WrittenArgumentsComeFromTheSchema) {
  EXPECT_EQ(written_arguments(find_operator(kAddInPlace).schema()), (std::vector<size_t>{0}));
  EXPECT_TRUE(written_arguments(find_operator(kAdd).schema()).empty());
}

TEST(GlobalState, DifferencesAreNamedAndRestored) {
  const GlobalState before = GlobalState::capture();
  at::set_num_threads(before.threads + 1);
  const GlobalState after = GlobalState::capture();
  ASSERT_EQ(before.differences(after).size(), 1u);
  EXPECT_NE(before.differences(after)[0].find("intra-op threads"), std::string::npos);
  before.restore();
  EXPECT_TRUE(before.differences(GlobalState::capture()).empty());
}

TEST(Threads, OnlyThreadsStillRunningAreLeft) {
  const std::vector<int> before = process_threads();
  std::thread quick([] {});
  quick.join();
  EXPECT_TRUE(threads_left_running(before, 10).empty());
  std::atomic<bool> stop{false};
  std::thread lingering([&] { while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1)); });
  EXPECT_EQ(threads_left_running(before, 10).size(), 1u);
  stop = true;
  lingering.join();
}

TEST(InputChecks, BatchNormWritesItsRunningStatisticsWithoutSayingSo) {
  const OperatorSpec batch_norm{"t", "native_batch_norm.default", "x", "aten::native_batch_norm", "", nullptr, 0};
  const c10::FunctionSchema& schema = find_operator(batch_norm).schema();
  EXPECT_TRUE(written_arguments(schema).empty());
  EXPECT_EQ(written_arguments(schema, facts_of("native_batch_norm.default").unannotated_writes), (std::vector<size_t>{3, 4}));
}

// Work queued on a pooled side stream (20 passes over 64 MiB, milliseconds of work) is still
// running when the current stream is done, unless the current stream was made to wait for it.
TEST(LateDeviceWork, ASideStreamLeftRunningIsCountedAndAJoinedOneIsNot) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const c10::Device device(c10::kCUDA, 0);
  const c10::impl::DeviceGuardImplInterface* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  const at::Tensor x = at::randn({1 << 24}, at::TensorOptions().device(device));
  auto work_on_side_stream = [&](bool join) {
    const c10::Stream current = guard->getStream(device);
    const c10::Stream side = guard->getStreamFromGlobalPool(device, /*isHighPriority=*/false);
    {
      c10::impl::InlineStreamGuard<c10::impl::VirtualGuardImpl> on_side(side);
      at::Tensor y = x;
      for (int i = 0; i < 20; ++i) y = at::relu(y) + 1;
    }
    if (join) {
      c10::Event done(c10::DeviceType::CUDA);
      done.record(side);
      done.block(current);
    }
  };
  synchronize_all_devices();
  EXPECT_EQ(pooled_streams_busy_after_current(device), 0);
  work_on_side_stream(/*join=*/false);
  EXPECT_EQ(pooled_streams_busy_after_current(device), 1);
  synchronize_all_devices();
  work_on_side_stream(/*join=*/true);
  EXPECT_EQ(pooled_streams_busy_after_current(device), 0);
  EXPECT_EQ(pooled_streams_busy_after_current(c10::Device(c10::kCPU)), 0);
}

}  // namespace
}  // namespace backendbench
