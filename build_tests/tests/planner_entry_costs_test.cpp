// Unit tests of what cases cost, learnt from earlier runs: planner/entry_costs.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "planner/entry_costs.h"
#include "planner_test_support.h"

namespace backendbench::planner {
namespace {

using namespace test;

TEST(EntryCosts, LearnsWhatCasesTookPerOperatorBackendAndDeviceKind) {
  Scratch scratch;
  const auto verdict = [](const char* op, const char* device, int64_t ms, const char* frontend = "tests") {
    Verdict made;
    made.suite = "torchbench", made.op = op, made.backend = "aten", made.device = device, made.frontend = frontend;
    made.case_ms = ms;
    return made;
  };
  CaseCosts costs;
  EXPECT_TRUE(costs.empty());
  costs.learn({verdict("convolution.default", "cuda:0", 40), verdict("convolution.default", "cuda:3", 60),
               verdict("convolution.default", "cpu", 900), verdict("relu.default", "cuda", -1),  // never ran
               verdict("relu.default", "cuda", 500, "bench")});                                  // a timing, not a check
  EXPECT_EQ(costs.per_case("torchbench", "convolution.default", "aten", "cuda"), 50.0);
  EXPECT_EQ(costs.per_case("torchbench", "convolution.default", "aten", "cpu"), 900.0);
  EXPECT_EQ(costs.per_case("torchbench", "relu.default", "aten", "cuda"), std::nullopt);
  EXPECT_EQ(costs.per_case("torchbench", "convolution.default", "impl1", "cuda"), std::nullopt);
  const std::string path = scratch.path() + "/logs/case_costs.json";
  costs.write(path);
  CaseCosts back = CaseCosts::read(path);
  EXPECT_EQ(back.per_case("torchbench", "convolution.default", "aten", "cuda"), 50.0);
  EXPECT_EQ(back.per_case("torchbench", "convolution.default", "aten", "cpu"), 900.0);
  // A later run's times replace an earlier run's; what it did not run is kept.
  back.learn({verdict("convolution.default", "cuda", 10)});
  EXPECT_EQ(back.per_case("torchbench", "convolution.default", "aten", "cuda"), 10.0);
  EXPECT_EQ(back.per_case("torchbench", "convolution.default", "aten", "cpu"), 900.0);
  // No file, or not this file: no history (the run plans by counts), never an error.
  EXPECT_TRUE(CaseCosts::read(scratch.path() + "/none.json").empty());
  EXPECT_TRUE(CaseCosts::read(scratch.write("other.json", R"({"schema": "other", "jobs": {"a/b/c/cuda": {"cases": 1, "ms": 2}}})")).empty());
  EXPECT_TRUE(CaseCosts::read(scratch.write("broken.json", "{not json")).empty());
}

TEST(EntryCosts, OnlyAnOperatorThatWouldOutlastTheOthersIsSplitFiner) {
  EXPECT_DOUBLE_EQ(longest_entry_ms(200000, 16), 3125);  // a quarter of each entry's share
  EXPECT_DOUBLE_EQ(longest_entry_ms(200000, 4), 12500);
  EXPECT_DOUBLE_EQ(longest_entry_ms(3000, 2), 1000);  // never under a second
  EXPECT_DOUBLE_EQ(longest_entry_ms(3000, 0), 1000);
  EXPECT_EQ(parts_for(1900, 95000, 3125, 10), 31);  // TorchBench's convolution_backward on four GPUs
  EXPECT_EQ(parts_for(1900, 95000, 12500, 10), 10);  // on one: the build's split stands
  EXPECT_EQ(parts_for(190, 500, 3125, 0), 1);
  EXPECT_EQ(parts_for(3, 1e6, 1000, 0), 3);  // at most a part per case
  EXPECT_EQ(parts_for(0, 1e6, 1000, 0), 1);
}

}  // namespace
}  // namespace backendbench::planner
