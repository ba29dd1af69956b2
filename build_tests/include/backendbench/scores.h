// The performance verdict of a ./bench run, with BackendBench's definitions:
// - a case's speedup is reference time / kernel time (here the median over interleaved pairs);
// - a case whose kernel fails (outputs differ from the reference, or it throws) counts as
//   speedup 1.0, as in BackendBench, and makes its operator incorrect;
// - an operator's speedup is the geometric mean over its cases; the overall speedup is the
//   geometric mean over operators;
// - perf@p is the fraction of operators that are correct on every case and whose speedup is
//   above p (KernelBench's fast_p).
// Each kernel backend (impl<N>, calibration backends) is scored on its own; the aten backend
// (the reference alone) is not scored.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace backendbench {

struct ScoredCase {
  std::string op, case_name, backend, arguments;
  bool correct = false;
  double reference_us = 0, kernel_us = 0, speedup = 0;  // medians, and the speedup
  double kernel_mean_us = 0;                             // the kernel's mean time (do_bench reports means)
};

struct OperatorScore {
  int cases = 0;
  int failed = 0;
  double geomean_speedup = 1;
  bool correct() const { return failed == 0; }
};

struct BackendScore {
  std::map<std::string, OperatorScore> operators;
  double geomean_speedup = 1;
  std::map<double, double> perf_at;  // p → perf@p, for p in kPerfAtP
};

inline const std::vector<double> kPerfAtP = {0.0, 1.0, 1.5, 2.0};

struct Summary {
  std::map<std::string, BackendScore> backends;
  std::vector<ScoredCase> cases;
  std::string text() const;  // a table per backend
  std::string json() const;  // everything, cases included
};

Summary summarize(const std::vector<ScoredCase>& cases);

}  // namespace backendbench
