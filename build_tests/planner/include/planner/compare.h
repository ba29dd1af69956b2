// `backendbench compare A B`: what changed between two results folders, case by case (matched by
// suite, operator, backend, case and test type) and per (operator, backend) row.
// - a regression: a test that passed in A and fails in B, or a speedup that fell by more than
//   the threshold (both timed and passing);
// - an improvement: the reverse.
#pragma once

#include <string>
#include <vector>

#include "backendbench/verdict.h"

namespace backendbench::planner {

struct CaseChange {
  std::string suite, op, backend, case_name, test_type;  // test_type: correctness or performance
  std::string what;  // "passed → failed: <message>", "speedup 1.20x → 0.95x (-21%)"
};

struct RowChange {
  std::string op, backend;
  double speedup_before, speedup_after;  // geomean; NaN without performance tests
  int failed_before = 0, failed_after = 0;
  bool only_before = false, only_after = false;
};

struct Comparison {
  std::vector<CaseChange> regressions, improvements;
  std::vector<RowChange> rows;
  int matched = 0, only_before = 0, only_after = 0;
};

Comparison compare_runs(const std::vector<Verdict>& before, const std::vector<Verdict>& after, double threshold);
std::string comparison_text(const Comparison& comparison, const std::string& before_label,
                            const std::string& after_label, double threshold);
// The same as one HTML page with nothing to load (the console's order: regressions, then fixes and
// speedups, then every (operator, backend) row, those that got worse first); every text escaped.
std::string comparison_html(const Comparison& comparison, const std::string& before_label,
                            const std::string& after_label, double threshold);

}  // namespace backendbench::planner
