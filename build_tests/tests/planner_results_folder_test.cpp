// Unit tests of results_folder.h: BackendBench's four files from verdicts, with the original's
// names and columns and its documented quirks fixed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"

namespace backendbench {
namespace {

Verdict correctness(const char* op, const char* arguments, bool passed, double max_abs_error = 0) {
  Verdict verdict;
  verdict.op = op;
  verdict.arguments = arguments;
  verdict.backend = "impl1";
  verdict.suite = "smoke";
  verdict.frontend = "tests";
  verdict.max_abs_error = max_abs_error;
  verdict.max_rel_error = max_abs_error / 2;
  if (!passed) {
    verdict.status = Verdict::Status::kFailed;
    verdict.checks = {{"fallback", false, "called aten::relu"}};
    verdict.errors = {"relu.default case c: fallback: called aten::relu"};
  }
  return verdict;
}

Verdict performance(const char* op, const char* arguments, double speedup) {
  Verdict verdict = correctness(op, arguments, true);
  verdict.frontend = "bench";
  if (speedup > 0) {
    verdict.timing = TimingFigures{20, 20 / speedup, 20 / speedup, speedup};
  } else {
    verdict.status = Verdict::Status::kFailed;
    verdict.errors = {"flagged suspect"};
    verdict.flags = {"suspect"};
  }
  return verdict;
}

std::vector<std::vector<std::string>> csv_rows(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    rows.emplace_back();
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');) rows.back().push_back(field);
    if (!line.empty() && line.back() == ',') rows.back().push_back("");
  }
  return rows;
}

TEST(ResultsFolder, RecordsAreTheOriginalsSortedAndStrictJson) {
  Verdict skipped = correctness("abs.default", "T([2])", true);
  skipped.status = Verdict::Status::kSkipped;
  Verdict huge = correctness("relu.default", "((T([3], f32),), {})", true);
  huge.max_abs_error = INFINITY;
  const OriginalFiles files = original_files(
      {performance("relu.default", "((T([2], f32),), {})", 2.0), huge, correctness("add.Tensor", "x", false), skipped},
      "backendbench run", 1.0);
  const nlohmann::json records = nlohmann::json::parse(files.full_results_json);  // throws on -Infinity or NaN
  ASSERT_EQ(records.size(), 3u);  // the skipped verdict is not a test that ran
  EXPECT_EQ(records[0]["op_name"], "add.Tensor");
  EXPECT_EQ(records[0]["is_correct"], false);
  EXPECT_EQ(records[0]["error_type"], "fallback");
  EXPECT_EQ(records[0]["test_type"], "correctness");
  EXPECT_EQ(records[1]["args"], "((T([2], f32),), {})");  // relu's by arguments, as the original sorts
  EXPECT_EQ(records[1]["test_type"], "performance");
  EXPECT_DOUBLE_EQ(records[1]["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(records[1]["benchmark_time_ms"].get<double>(), 0.01);
  EXPECT_EQ(records[1]["successfully_ran"], true);
  EXPECT_TRUE(records[2]["max_abs_error"].is_null());  // infinite: null, never Infinity
  EXPECT_EQ(records[2]["backend"], "impl1");
  const nlohmann::json failed = nlohmann::json::parse(files.failed_tests_json);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0], records[0]);
}

TEST(ResultsFolder, OperatorSummaryCountsTestsAndFailuresAsOne) {
  const OriginalFiles files = original_files({correctness("relu.default", "a", true, 0.0), correctness("relu.default", "b", false, 0.25),
                                              performance("relu.default", "a", 4.0), performance("relu.default", "b", 0)},
                                             "backendbench run", 1.0);
  const auto rows = csv_rows(files.operator_summary_csv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"operator", "total_tests", "correctness_tests", "performance_tests",
                                               "passed_correctness_tests", "passed_performance_tests",
                                               "failed_correctness_tests", "failed_performance_tests", "correctness_rate",
                                               "avg_speedup", "geomean_speedup", "max_absolute_error",
                                               "max_relative_error", "backend"}));
  const std::vector<std::string>& relu = rows[1];
  EXPECT_EQ(relu[0], "relu.default");
  EXPECT_EQ(relu[1], "4");  // tests, not operators
  EXPECT_EQ(relu[2], "2");
  EXPECT_EQ(relu[3], "2");
  EXPECT_EQ(relu[4], "1");
  EXPECT_EQ(relu[5], "1");
  EXPECT_EQ(relu[8], "0.5");
  EXPECT_EQ(relu[9], "2.5");  // (4 + 1) / 2: the failed test counts as 1.0
  EXPECT_EQ(relu[10], "2");   // sqrt(4 × 1)
  EXPECT_EQ(relu[11], "0.25");
  EXPECT_EQ(relu[13], "impl1");
}

TEST(ResultsFolder, SummaryScoresAndSortsSpeedupsAsNumbers) {
  Verdict slow = performance("add.Tensor", "a", 2.0), fast = performance("mul.Tensor", "a", 10.0);
  const OriginalFiles files = original_files({slow, fast, correctness("mul.Tensor", "a", false)}, "backendbench run --p 1.5", 1.5);
  const std::string& md = files.overall_summary_md;
  EXPECT_NE(md.find("```bash\nbackendbench run --p 1.5\n```"), std::string::npos);
  EXPECT_NE(md.find("| Correctness Score | 0.50 |"), std::string::npos);                    // mul failed one
  EXPECT_NE(md.find("| Performance Score (geomean speedup) | 4.47 |"), std::string::npos);  // sqrt(2 × 10)
  EXPECT_NE(md.find("| Perf@1.5 Score | 0.50 |"), std::string::npos);                       // add only: mul is incorrect
  const size_t ten = md.find("| mul.Tensor (impl1) | 0.0000% | 10.0000x |");
  const size_t two = md.find("| add.Tensor (impl1) | N/A | 2.0000x |");
  ASSERT_NE(ten, std::string::npos);
  ASSERT_NE(two, std::string::npos);
  EXPECT_LT(ten, two);  // 10x first: as numbers, not as text
}

TEST(ResultsFolder, SummaryScoresEachBackendOnItsOwn) {
  Verdict aten_relu = correctness("relu.default", "a", true), aten_add = correctness("add.Tensor", "a", true);
  aten_relu.backend = aten_add.backend = "aten";
  Verdict library = performance("relu.default", "a", 3.0);
  library.backend = "flag_gems";
  const OriginalFiles files = original_files(
      {aten_relu, aten_add, performance("relu.default", "a", 4.0), correctness("add.Tensor", "a", false), library},
      "backendbench run", 1.0, BackendNames{"my_kernels", {"flag_gems"}});
  const std::string& md = files.overall_summary_md;
  EXPECT_NE(md.find("| Metric | aten | my_kernels | flag_gems |\n|--------|-------|-------|-------|\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| Correctness Score | 1.00 | 0.50 | 1.00 |"), std::string::npos) << md;  // pooled: 0.75
  EXPECT_NE(md.find("| Performance Score (geomean speedup) | N/A | 4.00 | 3.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Perf@1 Score | N/A | 0.50 | 1.00 |"), std::string::npos) << md;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ResultsFolder, WritesTheFourFilesWhole) {
  const std::string directory = files::temporary_directory() + "/backendbench_results_folder_test_" + std::to_string(getpid());
  const OriginalFiles written = original_files({performance("relu.default", "a", 2.0)}, "backendbench run", 1.0);
  write_original_files(directory + "/run", written);
  EXPECT_EQ(read(directory + "/run/full_results.json"), written.full_results_json);
  EXPECT_EQ(read(directory + "/run/operator_summary.csv"), written.operator_summary_csv);
  EXPECT_EQ(read(directory + "/run/failed_tests.json"), written.failed_tests_json);
  EXPECT_EQ(read(directory + "/run/OVERALL_SUMMARY.md"), written.overall_summary_md);
  EXPECT_EQ(files::files_ending_with(directory, ".partial"), std::vector<std::string>{});
  files::remove_tree(directory);
}

TEST(ResultsFolder, AnUnwritableFolderIsOneErrorNamingTheFile) {
  try {
    write_original_files("/proc/backendbench_cannot_be_here", original_files({}, "backendbench run", 1.0));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("/proc/backendbench_cannot_be_here"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace backendbench
