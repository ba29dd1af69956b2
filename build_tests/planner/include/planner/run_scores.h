// A run's results per (operator, backend) and its scores, as BackendBench defines them (the one
// place these rules live; the results folder, the backendbench command and its report use them):
// - the tests' verdicts are correctness tests, ./bench's performance tests; skipped ones are not
//   counted;
// - a performance test's speedup is reference time / kernel time, and a failed one counts as
//   1.0, and one flagged speedup_uncertain (timing.h: a busy CPU, or too wide an interval) at
//   most 1.0 (counted_speedup);
// - a row is correct when it passed every correctness test (none: correct, as the original);
// - the correctness score is the fraction of correct rows, the performance score the geometric
//   mean over rows of their geometric-mean speedups, perf@p the fraction of rows that are correct
//   and faster than p (KernelBench's fast_p).
#pragma once

#include <string>
#include <vector>

#include "backendbench/verdict.h"

namespace backendbench {

bool is_performance_test(const Verdict& verdict);
// What kind of failure: the checks that failed (comma-separated), else the first disqualifying
// flag (suspect, hidden_work, wrong_when_timed), else "error"; "" for a test that did not fail.
std::string failure_kind(const Verdict& verdict);
double counted_speedup(const Verdict& verdict);
// Why a test failed, shortest first: its first failed check and that check's own message, else
// its first error's first line.
std::string first_failure_reason(const Verdict& verdict);

// The geometric mean of speedups with a 95 % interval from their spread across cases (Student's t
// on the logarithms; NaN bounds with fewer than 2), and the lowest and highest. All NaN when empty.
struct SpeedupSpread {
  double geomean, low, high, lowest, highest;
};
SpeedupSpread speedup_spread(const std::vector<double>& speedups);

struct OperatorResult {
  std::string op, backend;
  int correctness_tests = 0, performance_tests = 0, passed_correctness = 0, passed_performance = 0;
  double max_abs_error, max_rel_error;  // NaN: no correctness test
  double aten_share;                    // the largest Verdict::aten_share; NaN: none measured
  std::vector<double> speedups;         // counted_speedup per performance test

  OperatorResult();
  bool correct() const { return passed_correctness == correctness_tests; }
  double correctness_ratio() const;  // NaN without correctness tests
  double geomean_speedup() const;    // NaN without performance tests
  double mean_speedup() const;       // NaN without performance tests
};

// One row per (operator, backend) of the verdicts that are not skipped, sorted by operator, then backend.
std::vector<OperatorResult> operator_results(const std::vector<Verdict>& verdicts);

struct RunScore {
  int operators = 0;       // rows
  double correctness = 0;  // NaN without rows
  double performance = 0;  // NaN without performance tests
  double perf_at_p = 0;    // NaN without performance tests
};
RunScore run_score(const std::vector<OperatorResult>& rows, double p);

// The backends as the user named them in a run, each scored on its own: aten, the kernel folder
// (every impl<N> row, under `kernels_label`: "directory" or the folder) and each op library (its
// rows carry the library's name), in that order, those without rows left out. The console,
// run.json, the report and OVERALL_SUMMARY.md all score by these groups.
struct BackendNames {
  std::string kernels_label = "directory";
  std::vector<std::string> op_libraries;
};
struct BackendScore {
  std::string label;
  RunScore score;
};
std::vector<BackendScore> backend_scores(const std::vector<OperatorResult>& rows, const BackendNames& names, double p);

}  // namespace backendbench
