// Unit tests of comparing two results folders: planner/compare.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "planner/compare.h"
#include "planner_test_support.h"

namespace backendbench::planner {
namespace {

using namespace test;

TEST(Compare, FindsBrokenFixedSlowerAndFasterCases) {
  const std::vector<Verdict> before = {verdict_of("a", true), verdict_of("b", false), verdict_of("c", true, 2.0, "bench"),
                                       verdict_of("d", true, 1.0, "bench"), verdict_of("e", true, 1.0, "bench"),
                                       verdict_of("gone", true)};
  const std::vector<Verdict> after = {verdict_of("a", false), verdict_of("b", true), verdict_of("c", true, 1.5, "bench"),
                                      verdict_of("d", true, 1.5, "bench"), verdict_of("e", true, 1.05, "bench"),
                                      verdict_of("new", true)};
  const Comparison comparison = compare_runs(before, after, 0.10);
  EXPECT_EQ(comparison.matched, 5);
  EXPECT_EQ(comparison.only_before, 1);
  EXPECT_EQ(comparison.only_after, 1);
  ASSERT_EQ(comparison.regressions.size(), 2u);  // a broke; c lost 25 %
  EXPECT_EQ(comparison.regressions[0].case_name, "a");
  EXPECT_NE(comparison.regressions[0].what.find("passed → failed: relu.default case a: wrong values"), std::string::npos);
  EXPECT_EQ(comparison.regressions[1].what, "speedup 2.000x → 1.500x (-25.0%)");
  ASSERT_EQ(comparison.improvements.size(), 2u);  // b fixed; d gained 50 %; e's 5 % is within the threshold
  EXPECT_EQ(comparison.improvements[0].case_name, "b");
  EXPECT_EQ(comparison.improvements[1].case_name, "d");
  ASSERT_EQ(comparison.rows.size(), 1u);
  EXPECT_EQ(comparison.rows[0].failed_before, 1);
  EXPECT_EQ(comparison.rows[0].failed_after, 1);
  EXPECT_NE(comparison_text(comparison, "A", "B", 0.10).find("2 regressions"), std::string::npos);
}

TEST(Compare, PageShowsRegressionsFirstAndEscapesEveryText) {
  std::vector<Verdict> before = {verdict_of("a", true), verdict_of("b", false), verdict_of("c", true, 2.0, "bench")};
  std::vector<Verdict> after = {verdict_of("a", false), verdict_of("b", true), verdict_of("c", true, 1.5, "bench")};
  after[0].errors = {"expected <b>&\"1\"</b>"};  // a message is text, never markup
  const std::string page = comparison_html(compare_runs(before, after, 0.10), "runs/<old>", "runs/new", 0.10);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<title>backendbench compare: runs/&lt;old&gt; (A) and runs/new (B)</title>"), std::string::npos);
  EXPECT_NE(page.find("2 regressions, 1 improvements"), std::string::npos);  // a broke, c slowed; b fixed
  EXPECT_NE(page.find("expected &lt;b&gt;&amp;&quot;1&quot;&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<b>&"), std::string::npos);
  // Regressions, then improvements, then the rows; c's lost speedup is among the regressions.
  const size_t regressions = page.find("id=\"regressions\""), improvements = page.find("id=\"improvements\""),
               rows = page.find("id=\"rows\"");
  ASSERT_NE(regressions, std::string::npos);
  EXPECT_LT(regressions, improvements);
  EXPECT_LT(improvements, rows);
  EXPECT_NE(page.substr(regressions, improvements - regressions).find("speedup 2.000x → 1.500x (-25.0%)"), std::string::npos);
  EXPECT_NE(page.substr(improvements, rows - improvements).find("passed"), std::string::npos);
}

}  // namespace
}  // namespace backendbench::planner
