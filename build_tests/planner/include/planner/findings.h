// What a reader of a run needs first, as data: which kernels are wrong and the first reason for
// each, which are slow and on which inputs, what to run to reproduce a failure, and which tests
// were skipped and why. The report's first screen and the console's end both draw from these.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "backendbench/verdict.h"

namespace backendbench::planner {

// One timed case of a kernel that was slower than the reference.
struct SlowCase {
  std::string suite, case_name, arguments, source;  // source: trace file:line
  double speedup = 0;
};

// One kernel: an (operator, backend) row of the run.
struct KernelFinding {
  std::string op, backend, kernel_file;  // kernel_file as a reader finds it (see shown_path)
  int tests = 0, failed = 0;             // correctness and performance tests, skipped ones not counted
  int timed = 0;                         // performance tests
  // The first failed test: its case, what failed (its first failed check and that check's message,
  // else its first error's first line) and the command that runs that case again with the run's
  // salt. Empty when nothing failed.
  std::string failed_case, first_reason, reproduce;
  // Geometric mean of the counted speedups, with a 95 % interval from their spread across cases
  // (Student's t on the logarithms; NaN bounds with fewer than 2 timed cases). NaN: not timed.
  double speedup, speedup_low, speedup_high;
  double case_low, case_high;  // the lowest and highest counted speedup of its cases
  std::vector<SlowCase> slowest;  // at most 3 timed cases below 1.0x, the slowest first

  KernelFinding();
  bool wrong() const { return failed > 0; }
  bool slow() const;  // correct, timed, and its geometric mean below 1.0x
};

struct SkippedTests {
  std::string backend, reason;
  int count = 0;
};

struct Findings {
  // The kernels, the wrong ones first (most failures first), then the slow ones (slowest first),
  // then the rest by operator. The aten reference is left out when kernels ran (it is timed
  // against itself); a run of aten alone lists it.
  std::vector<KernelFinding> kernels;
  std::vector<SkippedTests> skipped;  // per backend and reason, the most first
};

// `run`: the run's run.json (build_directory, kernels_directory, working_directory).
Findings run_findings(const std::vector<Verdict>& verdicts, const nlohmann::json& run);

// A shell command that runs this one case again with its salt: the suite's test executable with
// --gtest_filter for a correctness test, ./bench with --benchmark_filter for a timed one; for a
// kernel that did not compile (run.json's kernels_not_compiled), which has no test in the build,
// `backendbench run` on its operator, which prints the compiler's first error.
std::string reproduce_command(const Verdict& verdict, const nlohmann::json& run);

// A path as the reader finds it: a kernel the run linked into the build's kernel view shown at
// its place in the kernel folder; then, when it lies under the folder the run was started in,
// relative to it.
std::string shown_path(const std::string& path, const nlohmann::json& run);

nlohmann::json findings_json(const Findings& findings);

}  // namespace backendbench::planner
