// Unit tests of observe.h: what is observed around a call.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"
#include "backendbench/tensor_values.h"
#include <ATen/Parallel.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

TEST(Fallback, RecordingIsThreadLocalAndStops) {
  const at::Tensor t = at::ones({4});
  const auto calls = record_operator_calls([&] { at::relu(t); });
  EXPECT_NE(std::find(calls.begin(), calls.end(), "aten::relu"), calls.end());
  at::relu(t);  // after recording: nothing is kept
  EXPECT_EQ(record_operator_calls([] {}).size(), 0u);
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

}  // namespace
}  // namespace backendbench
