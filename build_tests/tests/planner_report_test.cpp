// Unit tests of the report's data and page: planner/report.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "planner/report.h"
#include "planner/findings.h"
#include "planner_test_support.h"

namespace backendbench::planner {
namespace {

using namespace test;

TEST(Report, DataHoldsScoresRowsFailuresAndCases) {
  std::vector<Verdict> verdicts = {verdict_of("a", true), verdict_of("b", false), verdict_of("a", true, 2.0, "bench")};
  Verdict reference = verdict_of("a", true);
  reference.backend = "aten";
  verdicts.push_back(reference);
  const nlohmann::json data = report_data(verdicts, {{"kernels_label", "my_kernels"}, {"p", 1.5}, {"command", "x"}});
  ASSERT_EQ(data["groups"].size(), 2u);
  EXPECT_EQ(data["groups"][0]["label"], "aten");
  EXPECT_EQ(data["groups"][0]["correctness"], 1.0);
  EXPECT_TRUE(data["groups"][0]["performance"].is_null());
  EXPECT_EQ(data["groups"][1]["label"], "my_kernels");
  EXPECT_EQ(data["groups"][1]["correctness"], 0.0);
  EXPECT_EQ(data["groups"][1]["performance"], 2.0);
  EXPECT_EQ(data["groups"][1]["perf_at_p"], 0.0);  // faster than 1.5 but incorrect
  ASSERT_EQ(data["failures"].size(), 1u);
  EXPECT_EQ(data["failures"][0]["case"], "b");
  EXPECT_EQ(data["cases"].size(), 4u);
}

TEST(Report, EachOpLibraryIsAGroupOfItsOwn) {
  Verdict library = verdict_of("a", false);
  library.backend = "flag_gems";
  const nlohmann::json groups =
      group_scores({verdict_of("a", true), library}, {{"kernels_label", "my_kernels"}, {"op_libraries", {"flag_gems"}}}, 1.0);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]["label"], "my_kernels");
  EXPECT_EQ(groups[0]["correctness"], 1.0);
  EXPECT_EQ(groups[1]["label"], "flag_gems");
  EXPECT_EQ(groups[1]["correctness"], 0.0);
}

// The console and run.json (group_scores) and OVERALL_SUMMARY.md score the same groups alike.
TEST(Report, SummaryAndConsoleAgreePerBackend) {
  Verdict aten = verdict_of("a", true), timed = verdict_of("c", true, 2.0, "bench");
  aten.backend = "aten";
  timed.op = "add.Tensor";  // the kernels: relu wrong, add right and 2x
  const nlohmann::json run = {{"kernels_label", "my_kernels"}, {"p", 1.5}};
  const std::vector<Verdict> verdicts = {aten, verdict_of("b", false), timed};
  const nlohmann::json groups = group_scores(verdicts, run, 1.5);
  const std::string md = original_files(verdicts, "backendbench run", 1.5, backend_names(run)).overall_summary_md;
  ASSERT_EQ(groups.size(), 2u);
  std::string header = "| Metric |", correctness = "| Correctness Score |", performance = "| Performance Score (geomean speedup) |";
  for (const nlohmann::json& group : groups) {
    auto text = [&](const char* key) {
      if (group[key].is_null()) return std::string(" N/A |");
      char value[32];
      std::snprintf(value, sizeof(value), " %.2f |", group[key].get<double>());
      return std::string(value);
    };
    header += " " + group["label"].get<std::string>() + " |";
    correctness += text("correctness");
    performance += text("performance");
  }
  EXPECT_NE(md.find(header + "\n"), std::string::npos) << header << "\n" << md;
  EXPECT_NE(md.find(correctness + "\n"), std::string::npos) << correctness << "\n" << md;
  EXPECT_NE(md.find(performance + "\n"), std::string::npos) << performance << "\n" << md;
  EXPECT_EQ(groups[1]["correctness"], 0.5);  // per backend: the pooled figure would be 2 of 3
}

TEST(Report, PageEmbedsItsDataAndScriptsSafely) {
  Verdict hostile = verdict_of("</script><script>alert(1)</script>", false);
  const nlohmann::json data =
      report_data({hostile}, {{"suites", {"run <b>&"}}, {"backends", {"aten"}}, {"device", "cpu"}, {"p", 1.0}});
  const std::string page = report_html(data, BACKENDBENCH_TEST_SOURCE_DIR "/templates", "window.Plotly = {};");
  EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
  EXPECT_NE(page.find("<\\/script><script>alert(1)<\\/script>"), std::string::npos);
  EXPECT_NE(page.find("<title>backendbench: run &lt;b&gt;&amp; · aten · cpu</title>"), std::string::npos);
  EXPECT_NE(page.find("window.Plotly = {};"), std::string::npos);
  EXPECT_NE(page.find("@generated"), std::string::npos);
  const std::string without = report_html(data, BACKENDBENCH_TEST_SOURCE_DIR "/templates", "");
  EXPECT_NE(without.find("plotly.js was not found"), std::string::npos);
}

TEST(Report, TitleSaysWhatRanWithPathsRelativeToWhereItStarted) {
  nlohmann::json run = kRunHere;
  run["suites"] = {"smoke", "edge"};
  run["backends"] = {"aten", "directory (/home/me/project/generated_kernels)", "/home/me/project/my kernels", "/elsewhere/k"};
  EXPECT_EQ(report_data({}, run)["title"], "smoke, edge · aten, directory (generated_kernels), my kernels, /elsewhere/k · cpu");
  run["versions"] = {{"gpu", "NVIDIA H200"}};
  EXPECT_EQ(report_data({}, run)["title"], "smoke, edge · aten, directory (generated_kernels), my kernels, /elsewhere/k · NVIDIA H200");
}

TEST(Report, SeveralRunsOnOnePageTaggedByGpuOrFolder) {
  const nlohmann::json h100 = {{"versions", {{"gpu", "NVIDIA H100"}}}, {"suites", {"smoke"}}};
  const nlohmann::json h200 = {{"versions", {{"gpu", "NVIDIA H200"}}}, {"suites", {"smoke"}}};
  EXPECT_EQ(run_tags({"a", "b"}, {h100, h200}), (std::vector<std::string>{"NVIDIA H100", "NVIDIA H200"}));
  EXPECT_EQ(run_tags({"runs/before/", "runs/after"}, {h100, h100}), (std::vector<std::string>{"before", "after"}));
  EXPECT_EQ(run_tags({"x/out", "y/out"}, {h100, h100}), (std::vector<std::string>{"out", "out (2)"}));

  Verdict slow = verdict_of("a", true, 0.5, "bench");
  const nlohmann::json data = combined_report_data({{"NVIDIA H100", {verdict_of("a", true)}, h100},
                                                   {"NVIDIA H200", {verdict_of("a", false), slow}, h200}});
  ASSERT_EQ(data["runs"].size(), 2u);
  EXPECT_EQ(data["runs"][1]["tag"], "NVIDIA H200");
  ASSERT_EQ(data["groups"].size(), 2u);
  EXPECT_EQ(data["groups"][0]["label"], "NVIDIA H100: directory");
  ASSERT_EQ(data["findings"]["kernels"].size(), 2u);
  EXPECT_EQ(data["findings"]["kernels"][0]["backend"], "NVIDIA H200: impl1");  // the wrong one first, across runs
  EXPECT_TRUE(data["findings"]["kernels"][0]["wrong"].get<bool>());
  const std::string reproduce = data["findings"]["kernels"][0]["reproduce"];
  const std::string untagged = " --gtest_filter=smoke/relu__default.impl1/a";  // the backend as its own run names it
  EXPECT_EQ(reproduce.substr(reproduce.size() - std::min(reproduce.size(), untagged.size())), untagged) << reproduce;
  EXPECT_EQ(data["cases"].size(), 3u);
  EXPECT_EQ(data["failures"][0]["backend"], "NVIDIA H200: impl1");
}

}  // namespace
}  // namespace backendbench::planner
