// Unit tests of the run's entries and their jobs: planner/jobs.h.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <csignal>

#include "planner/interruption.h"
#include "planner/jobs.h"
#include "planner/process.h"

namespace backendbench::planner {
namespace {

// Whether `pid` runs (a zombie does not).
bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

TEST(Jobs, OperatorsNoSuiteHasAreNamed) {
  EXPECT_EQ(unmatched_filters({"relu", "mul", "add.Tensor"}, {"relu.default", "add.Tensor", "add_.Tensor"}),
            (std::vector<std::string>{"mul"}));
  EXPECT_TRUE(unmatched_filters({"add"}, {"add.Tensor"}).empty());
}

TEST(Jobs, AnEntryAsAJobCarriesItsPartTheSaltAndTheDevice) {
  Entry entry{"smoke", "relu.default", "impl1", "relu/relu_implementation_1.cpp"};
  entry.cases.resize(5);
  entry.parts = 2;
  const Job whole = job_of(entry, Job::Mode::kCheck, 42, "");
  EXPECT_EQ(whole.part, 0);
  EXPECT_EQ(whole.salt, std::optional<uint64_t>(42));
  EXPECT_FALSE(whole.device.has_value());
  const Job second = job_of(entry, Job::Mode::kTime, 7, "cuda", entry.part(1));
  EXPECT_EQ(second.part, 2);
  EXPECT_EQ(second.parts, 2);
  EXPECT_EQ(second.device, std::optional<std::string>("cuda"));
  EXPECT_EQ(entry.part_cases(0) + entry.part_cases(1), 5u);
}

// A run stopped from outside: its cases without a verdict are skipped as not run, those with one
// kept as written; an entry that failed before it ran (a kernel that did not compile) still fails.
TEST(Jobs, AnInterruptedRunSkipsTheCasesWithoutAVerdict) {
  Entry ran{"smoke", "relu.default", "impl1", "relu/relu_implementation_1.cpp"};
  ran.cases = {{"a"}, {"b"}};
  Entry broken{"smoke", "relu.default", "impl2", "relu/relu_implementation_2.cpp"};
  broken.cases = {{"a"}};
  broken.failure = "does not compile: relu_implementation_2.cpp:3:1: error: expected ';'";
  Verdict judged;
  judged.suite = "smoke";
  judged.op = "relu.default";
  judged.backend = "impl1";
  judged.case_name = "a";
  judged.status = Verdict::Status::kPassed;
  const std::vector<Verdict> verdicts = collect({ran, broken}, {judged}, Job::Mode::kCheck, 7, "logs/ctest.log", {}, SIGINT);
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_TRUE(verdicts[0].passed());
  EXPECT_EQ(verdicts[1].status, Verdict::Status::kSkipped);
  EXPECT_EQ(verdicts[1].skip_reason, "not run: the run was interrupted (SIGINT) before this case had a verdict");
  EXPECT_EQ(verdicts[1].skip_reason, not_run_reason(SIGINT));
  EXPECT_TRUE(verdicts[1].errors.empty());
  EXPECT_EQ(verdicts[2].status, Verdict::Status::kFailed);
  // Not interrupted: the same missing case fails, with where to look.
  const std::vector<Verdict> ended = collect({ran}, {judged}, Job::Mode::kCheck, 7, "logs/ctest.log");
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[1].status, Verdict::Status::kFailed);
  ASSERT_EQ(ended[1].errors.size(), 1u);
  EXPECT_NE(ended[1].errors[0].find("no verdict: the process running it ended first (logs/ctest.log)"), std::string::npos);
}

// Under a watch, once a signal came, nothing new starts; a second watch at once is refused.
TEST(Jobs, AfterAnInterruptNoProcessStarts) {
  {
    InterruptWatch watch;
    EXPECT_TRUE(interrupt_watch_active());
    EXPECT_THROW(InterruptWatch second, std::logic_error);
    EXPECT_EQ(run_process({"true"}, {}), 0);
    std::raise(SIGTERM);
    EXPECT_EQ(interrupting_signal(), SIGTERM);
    const std::string marker = ::testing::TempDir() + "/started_after_the_signal";
    std::remove(marker.c_str());
    EXPECT_EQ(run_process({"touch", marker}, {}), kInterruptedStatus);
    EXPECT_NE(access(marker.c_str(), F_OK), 0);
  }
  EXPECT_FALSE(interrupt_watch_active());
  EXPECT_EQ(interrupting_signal(), 0);
}

// The child's whole process group is stopped: what it started in the background (as CTest leaves
// its tests, which ignore nothing) does not outlive the interrupted run.
TEST(Jobs, AnInterruptStopsTheChildsWholeGroup) {
  const std::string pid_file = ::testing::TempDir() + "/background_pid";
  std::remove(pid_file.c_str());
  InterruptWatch watch;
  const auto started = std::chrono::steady_clock::now();
  bool raised = false;
  const int status = run_process({"sh", "-c", "sleep 60 & echo $! > " + pid_file + "; wait"}, {}, [&] {
    if (!raised && access(pid_file.c_str(), F_OK) == 0) {
      raised = true;
      std::raise(SIGINT);
    }
  }, 0.05);
  EXPECT_TRUE(raised);
  EXPECT_NE(status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  std::ifstream in(pid_file);
  pid_t background = 0;
  in >> background;
  ASSERT_GT(background, 0);
  // Gone, or a zombie waiting for whoever adopted it.
  for (int i = 0; i < 50 && process_alive(background); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(process_alive(background)) << "the background sleep " << background << " outlived the interrupt";
}

}  // namespace
}  // namespace backendbench::planner
