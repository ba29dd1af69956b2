// The performance verdict of a ./bench run, from its verdicts, with BackendBench's definitions:
// - a case's speedup is reference time / kernel time (the interquartile mean of the
//   interleaved pairs' ratios);
// - a case that fails (any check of check_case, an error, wrong results when timed, or a
//   disqualifying flag: suspect, hidden_work) counts as speedup 1.0, as in BackendBench, and
//   makes its row incorrect; skipped cases (no CUDA device, a documented limitation) are not
//   counted;
// - a row is one (operator, backend): its speedup is the geometric mean over its cases;
// - the overall speedup of a group is the geometric mean over its rows, and perf@p the fraction
//   of its rows that are correct on every case and whose speedup is above p (KernelBench's
//   fast_p). The groups: "kernels" (every kernel backend, impl<N>) and each calibration
//   backend on its own; the reference (aten) is not scored.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backendbench/verdict.h"

namespace backendbench {

struct OperatorScore {
  std::string op, backend;
  int cases = 0;
  int failed = 0;
  double geomean_speedup = 1;
  bool correct() const { return failed == 0; }
};

struct GroupScore {
  int rows = 0;
  double geomean_speedup = 1;
  std::map<double, double> perf_at;  // p → perf@p, for p in kPerfAtP
};

inline const std::vector<double> kPerfAtP = {0.0, 1.0, 1.5, 2.0};

struct Summary {
  std::vector<OperatorScore> rows;          // by (operator, backend)
  std::map<std::string, GroupScore> groups;  // "kernels", "aten_self", ...
  std::vector<Verdict> cases;
  std::string text() const;
  std::string json() const;
};

Summary summarize(const std::vector<Verdict>& verdicts);

}  // namespace backendbench
