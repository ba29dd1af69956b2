// Unit tests of the planner's build tree and child processes: processes, a build folder's cache, the suite manifest.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "planner/build_tree.h"
#include "planner/process.h"
#include "language/diagnostic.h"
#include "planner_test_support.h"

namespace backendbench::planner {
namespace {

using namespace test;

TEST(Process, AProcessPastItsTimeoutIsStoppedAndSaysSo) {
  Scratch scratch;
  ProcessOptions options;
  options.log_path = scratch.path() + "/sleep.log";
  options.timeout_seconds = 0.3;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_process({"sleep", "30"}, options), kProcessTimedOut);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_NE(tail_of_file(options.log_path, 2).find("sleep ran longer than 0.3 s and was stopped"), std::string::npos);
  options.timeout_seconds = 30;
  EXPECT_EQ(run_process({"true"}, options), 0);  // within its limit: its own status
}

TEST(SuiteManifest, WhichBackendsRunOnTheCpu) {
  const auto backend = [](const char* kind, const char* language, bool cuda) {
    SuiteManifest::Backend facts;
    facts.kind = kind;
    facts.language = language;
    facts.cuda = cuda;
    return facts;
  };
  EXPECT_TRUE(backend("kernel", "cpp", false).runs_on_cpu(true));  // a C++ kernel in a CUDA run too
  EXPECT_FALSE(backend("kernel", "cuda", true).runs_on_cpu(true));
  EXPECT_FALSE(backend("reference", "", false).runs_on_cpu(true));
  EXPECT_TRUE(backend("reference", "", false).runs_on_cpu(false));
  EXPECT_FALSE(backend("kernel", "python", false).runs_on_cpu(true));  // a PyTorch composition: the run's device
  EXPECT_FALSE(backend("kernel", "python", true).runs_on_cpu(false));  // Triton
}

TEST(SuiteManifest, ReadsTheGeneratorsFileAndNamesABadOne) {
  Scratch scratch;
  const std::string good = scratch.write(
      "suite.json",
      R"json({"schema": "backendbench-suite", "version": 1, "suite": "s", "excluded_inputs": 2, "unselected_inputs": 0,
          "operators": [{"operator": "relu.default", "folder": "relu__default", "schema": "aten::relu(Tensor self) -> Tensor",
                         "cases": [{"name": "f32_4_x", "arguments": "((T([4], f32),), {})", "file": "t.txt", "line": 2,
                                    "count": 1, "input_elements": 4}],
                         "backends": [{"name": "aten", "kind": "reference"},
                                      {"name": "impl1", "kind": "kernel", "file": "k.cpp", "cuda": true}]}]})json");
  const SuiteManifest manifest = read_suite_manifest(good);
  ASSERT_EQ(manifest.operators.size(), 1u);
  EXPECT_EQ(manifest.excluded_inputs, 2);
  EXPECT_EQ(manifest.operators[0].cases[0].input_elements, 4);
  EXPECT_TRUE(manifest.operators[0].backends[1].cuda);
  const std::string bad = scratch.write("other.json", R"({"schema": "something-else"})");
  try {
    read_suite_manifest(bad);
    ADD_FAILURE() << "no error";
  } catch (const DiagnosticError& error) {
    EXPECT_EQ(std::string(error.what()), bad + ": error: not a suite manifest of version 1; expected a suite.json written by backendbench-gen");
  }
}

TEST(BuildTree, ReadsCachedValues) {
  Scratch scratch;
  scratch.write("CMakeCache.txt", "# comment\nBACKENDBENCH_SUITES:STRING=smoke;edge\nBACKENDBENCH_OPS:STRING=\n");
  const BuildTree tree("/src", scratch.path());
  EXPECT_TRUE(tree.configured());
  EXPECT_EQ(tree.cached("BACKENDBENCH_SUITES"), "smoke;edge");
  EXPECT_EQ(tree.cached("BACKENDBENCH_OPS"), "");
  EXPECT_FALSE(tree.cached("BACKENDBENCH_TOPN").has_value());
  EXPECT_EQ(tree.suite_manifest_path("smoke"), scratch.path() + "/generated/smoke/suite.json");
}

}  // namespace
}  // namespace backendbench::planner
