// A run's results in BackendBench's own files (full_results.json, operator_summary.csv,
// failed_tests.json, OVERALL_SUMMARY.md; their names and columns as the original writes them),
// from verdicts: the tests' verdicts are the correctness records, ./bench's the performance
// records. The original's documented quirks are fixed (the README lists them):
// - strict JSON: a value that is not a finite number is null, never -Infinity or NaN;
// - total_tests counts tests (the original counts operators);
// - a failed performance test counts as speedup 1.0 in every figure (the original's CSV leaves it
//   out while its summary counts it as 1.0);
// - the summary's operators are sorted by speedup as a number (the original sorts the formatted
//   text, so 10.0000x came below 2.0000x).
// A run may hold several kernels of one operator, so a row is one (operator, backend): the CSV has
// the original's 13 columns and then `backend`, and each JSON record a `backend` field.
#pragma once

#include <string>
#include <vector>

#include "planner/run_scores.h"
#include "backendbench/verdict.h"

namespace backendbench {

struct OriginalFiles {
  std::string full_results_json, operator_summary_csv, failed_tests_json, overall_summary_md;
};

// `command`: the command line as typed, for the summary; `p`: its perf@p threshold; `names`: the
// run's backends, which the summary scores each on its own (run_scores.h), as the console does.
OriginalFiles original_files(const std::vector<Verdict>& verdicts, const std::string& command, double p,
                             const BackendNames& names = {});

// Writes the four files into `directory` (created if missing), each under a temporary name first
// and then renamed into place, so no reader sees half a file. Throws std::runtime_error naming
// the file and the cause.
void write_original_files(const std::string& directory, const OriginalFiles& files);

}  // namespace backendbench
