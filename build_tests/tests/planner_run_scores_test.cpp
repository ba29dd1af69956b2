// Unit tests of run_scores.h: rows per (operator, backend) and the run's scores.
#include <gtest/gtest.h>

#include <cmath>

#include "planner/run_scores.h"

namespace backendbench {
namespace {

Verdict verdict_of(const char* op, const char* backend, const char* frontend, bool passed, double speedup = 0) {
  Verdict verdict;
  verdict.op = op;
  verdict.backend = backend;
  verdict.frontend = frontend;
  if (!passed) verdict.status = Verdict::Status::kFailed;
  if (speedup > 0) verdict.timing = TimingFigures{10, 10 / speedup, 10 / speedup, speedup};
  return verdict;
}

TEST(RunScores, RowsPerOperatorAndBackendLeaveSkippedOut) {
  Verdict skipped = verdict_of("relu.default", "impl1", "tests", true);
  skipped.status = Verdict::Status::kSkipped;
  const std::vector<OperatorResult> rows = operator_results(
      {verdict_of("relu.default", "impl2", "tests", false), verdict_of("relu.default", "impl1", "tests", true), skipped,
       verdict_of("relu.default", "impl1", "bench", true, 2.0), verdict_of("relu.default", "impl1", "bench", true, 8.0)});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].backend, "impl1");
  EXPECT_EQ(rows[0].correctness_tests, 1);
  EXPECT_EQ(rows[0].performance_tests, 2);
  EXPECT_DOUBLE_EQ(rows[0].geomean_speedup(), 4.0);
  EXPECT_DOUBLE_EQ(rows[0].mean_speedup(), 5.0);
  EXPECT_TRUE(rows[0].correct());
  EXPECT_FALSE(rows[1].correct());
  EXPECT_TRUE(std::isnan(rows[1].geomean_speedup()));
}

TEST(RunScores, FailedPerformanceTestsCountAsOneAndScoresFollowTheOriginal) {
  // add: correct, speedups 4 and a failed one (1.0) → 2.0; mul: incorrect, speedup 3.
  const std::vector<OperatorResult> rows = operator_results(
      {verdict_of("add.Tensor", "impl1", "tests", true), verdict_of("add.Tensor", "impl1", "bench", true, 4.0),
       verdict_of("add.Tensor", "impl1", "bench", false, 9.0), verdict_of("mul.Tensor", "impl1", "tests", false),
       verdict_of("mul.Tensor", "impl1", "bench", true, 3.0)});
  EXPECT_DOUBLE_EQ(rows[0].geomean_speedup(), 2.0);
  const RunScore score = run_score(rows, 1.5);
  EXPECT_EQ(score.operators, 2);
  EXPECT_DOUBLE_EQ(score.correctness, 0.5);
  EXPECT_NEAR(score.performance, std::sqrt(6.0), 1e-12);
  EXPECT_DOUBLE_EQ(score.perf_at_p, 0.5);  // mul is faster than 1.5 but incorrect
  EXPECT_DOUBLE_EQ(run_score(rows, 2.0).perf_at_p, 0.0);  // above p, not equal to it
}

TEST(RunScores, AnUncertainSpeedupCountsNoGainAndKeepsItsLoss) {
  Verdict fast = verdict_of("relu.default", "impl1", "bench", true, 4.0), slow = verdict_of("relu.default", "impl1", "bench", true, 0.5);
  EXPECT_DOUBLE_EQ(counted_speedup(fast), 4.0);
  fast.flags = slow.flags = {"speedup_uncertain"};
  EXPECT_DOUBLE_EQ(counted_speedup(fast), 1.0);
  EXPECT_DOUBLE_EQ(counted_speedup(slow), 0.5);
}

TEST(RunScores, WithoutPerformanceTestsThePerformanceScoresAreNotNumbers) {
  const RunScore score = run_score(operator_results({verdict_of("add.Tensor", "aten", "tests", true)}), 1.0);
  EXPECT_DOUBLE_EQ(score.correctness, 1.0);
  EXPECT_TRUE(std::isnan(score.performance));
  EXPECT_TRUE(std::isnan(score.perf_at_p));
  EXPECT_TRUE(std::isnan(run_score({}, 1.0).correctness));
}

TEST(RunScores, AFailuresReasonIsItsFirstFailedCheckElseItsFirstErrorLine) {
  Verdict verdict = verdict_of("relu.default", "impl1", "tests", false);
  verdict.errors = {"relu.default case a (draw 1 of 2): output 0 differs\nmore detail", "second"};
  EXPECT_EQ(first_failure_reason(verdict), "output 0 differs (draw 1 of 2)");
  verdict.errors = {"no draw marker here\nmore"};
  EXPECT_EQ(first_failure_reason(verdict), "no draw marker here");
  // What a kernel threw leads, not the kernel's path and the case it repeats.
  verdict.errors = {"impl1 (/k/add__Tensor/add__Tensor_implementation_1.py) threw on add.Tensor case f32_ab "
                    "((T([2], f32), T([2], f32)), {'alpha': 2}) (traces/smoke.txt:4) (draw 1 of 2): a Python exception: "
                    "TypeError: add__Tensor_kernel_impl() got an unexpected keyword argument 'alpha'\nTraceback (most recent call last):"};
  EXPECT_EQ(first_failure_reason(verdict),
            "threw: a Python exception: TypeError: add__Tensor_kernel_impl() got an unexpected keyword argument 'alpha' (draw 1 of 2)");
  verdict.checks = {{"fallback", true, ""}, {"values", false, "output 0: 1 of 2 values differ\nand more"}};
  EXPECT_EQ(first_failure_reason(verdict), "values: output 0: 1 of 2 values differ");
  EXPECT_EQ(first_failure_reason(verdict_of("relu.default", "impl1", "tests", false)), "failed without a message");
}

TEST(RunScores, ASpeedupsSpreadIsItsGeometricMeanWithAStudentInterval) {
  EXPECT_TRUE(std::isnan(speedup_spread({}).geomean));
  const SpeedupSpread one = speedup_spread({2.0});
  EXPECT_DOUBLE_EQ(one.geomean, 2.0);
  EXPECT_TRUE(std::isnan(one.low) && std::isnan(one.high)) << "no interval from one case";
  const SpeedupSpread two = speedup_spread({1.0, 4.0});
  EXPECT_DOUBLE_EQ(two.geomean, 2.0);
  EXPECT_DOUBLE_EQ(two.lowest, 1.0);
  EXPECT_DOUBLE_EQ(two.highest, 4.0);
  // log spread: sd of {0, ln 4} is ln4/sqrt(2); t(1) = 12.706; half = 12.706 * sd / sqrt(2) = 12.706 * ln 4 / 2.
  EXPECT_NEAR(std::log(two.high / two.geomean), 12.706 * std::log(4.0) / 2, 1e-9);
  EXPECT_NEAR(two.low * two.high, two.geomean * two.geomean, 1e-9) << "symmetric on the logarithms";
  const SpeedupSpread same = speedup_spread({1.5, 1.5, 1.5});
  EXPECT_DOUBLE_EQ(same.low, 1.5);
  EXPECT_DOUBLE_EQ(same.high, 1.5);
}

}  // namespace
}  // namespace backendbench
