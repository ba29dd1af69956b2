// Unit tests of the progress line: planner/progress.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "planner/progress.h"
#include "planner_test_support.h"

namespace backendbench::planner {
namespace {

using namespace test;

TEST(Progress, CountsWholeLinesAsTheyAreAppended) {
  Scratch scratch;
  const std::string path = scratch.path() + "/v.jsonl";
  VerdictFollower follower({path, scratch.path() + "/not_yet.jsonl"});
  EXPECT_EQ(follower.update().done, 0);
  std::ofstream out(path);
  out << verdict_json(verdict_of("a", true)) << "\n" << verdict_json(verdict_of("b", false)) << "\n{\"sch";
  out.flush();
  ProgressCounts counts = follower.update();
  EXPECT_EQ(counts.done, 2);
  EXPECT_EQ(counts.failed, 1);
  out << "ema\": 1}\n";  // the half line, completed: not a verdict, so a failure
  out.flush();
  counts = follower.update();
  EXPECT_EQ(counts.done, 3);
  EXPECT_EQ(counts.failed, 2);
}

TEST(Progress, LineEstimatesTheTimeLeftAtTheRateSoFar) {
  EXPECT_EQ(progress_line("correctness", {10, 1, 40}, 20), "correctness  10/40 cases  1 failed  0:20 elapsed  about 1:00 left");
  EXPECT_EQ(progress_line("timing", {0, 0, 5}, 3), "timing  0/5 cases  0 failed  0:03 elapsed");
  EXPECT_EQ(clock_text(3725), "1:02:05");
}

}  // namespace
}  // namespace backendbench::planner
