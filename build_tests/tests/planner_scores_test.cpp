// Unit tests of scores.h: geomeans per (operator, backend), failures as 1.0, perf@p.
#include <gtest/gtest.h>

#include <cmath>

#include "planner/scores.h"

namespace backendbench {
namespace {

Verdict timed(const char* op, const char* backend, double speedup, bool passed = true) {
  Verdict verdict;
  verdict.op = op;
  verdict.backend = backend;
  verdict.status = passed ? Verdict::Status::kPassed : Verdict::Status::kFailed;
  if (passed) verdict.timing = TimingFigures{10, 10 / speedup, 10 / speedup, speedup};
  return verdict;
}

TEST(Scores, GeomeansFailuresAndPerfAtP) {
  Verdict skipped = timed("b", "impl1", 100);
  skipped.status = Verdict::Status::kSkipped;
  const Summary summary = summarize({timed("a", "impl1", 2.0), timed("a", "impl1", 0.5), timed("b", "impl1", 4.0),
                                     timed("b", "impl1", 0, /*passed=*/false), timed("b", "aten", 1.0), skipped});
  ASSERT_EQ(summary.rows.size(), 2u);  // aten is not scored; the skipped case is not counted
  EXPECT_NEAR(summary.rows[0].geomean_speedup, 1.0, 1e-12);  // sqrt(2 × 0.5)
  EXPECT_NEAR(summary.rows[1].geomean_speedup, 2.0, 1e-12);  // sqrt(4 × 1.0): the failure counts as 1.0
  EXPECT_EQ(summary.rows[1].cases, 2);
  EXPECT_FALSE(summary.rows[1].correct());
  const GroupScore& kernels = summary.groups.at("kernels");
  EXPECT_NEAR(kernels.geomean_speedup, std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(kernels.perf_at.at(0.0), 0.5);  // b is incorrect, so only a counts
  EXPECT_DOUBLE_EQ(kernels.perf_at.at(1.0), 0.0);  // a's 1.0 is not above 1
  EXPECT_NE(summary.json().find("\"perf@1.5\""), std::string::npos);
}

TEST(Scores, RowsAreOperatorAndBackendPairs) {
  // impl11 of relu and impl11 of add are different kernels: two rows, never one.
  const Summary summary = summarize({timed("relu.default", "impl11", 2.0), timed("add.Tensor", "impl11", 0.5)});
  ASSERT_EQ(summary.rows.size(), 2u);
  EXPECT_EQ(summary.rows[0].op, "add.Tensor");
  EXPECT_NEAR(summary.rows[0].geomean_speedup, 0.5, 1e-12);
  EXPECT_EQ(summary.rows[1].op, "relu.default");
  EXPECT_NE(summary.text().find("relu.default"), std::string::npos);
}

}  // namespace
}  // namespace backendbench
