// The one results schema: what check_case and time_case return, and what every front-end
// writes as JSON (one object per line, JSON Lines; documented in the README, "Verdicts").
// Version kVerdictSchemaVersion; a field is only ever added within a version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace backendbench {

constexpr int kVerdictSchemaVersion = 1;

struct CheckOutcome {
  std::string check;    // fallback, read_only_inputs, ...
  bool passed = true;
  std::string message;  // why it failed; "" when it passed
};

struct TimingFigures {
  double reference_us = 0, kernel_us = 0;  // medians
  double kernel_mean_us = 0;
  double speedup = 0;    // interquartile mean of the per-pair ratios reference/kernel
  double speedup_low = 0, speedup_high = 0;  // its 95 % interval (timing.h, speedup_interval)
  // The cores' worth of time other processes than the measurement's took while it ran (the
  // supervisor's reading of /proc, processes.h LoadMeter); -1: not measured (in-process timing, or
  // too short a measurement for /proc/stat's clock ticks).
  double other_load = -1;
  // The share of that time some task waited for a core (processes.h, LoadMeter::waited_share);
  // -1: not measured.
  double cpu_waited = -1;
  // The speedup both sides got called back to back by the supervisor's clock (kernel_workers.h,
  // judge_back_to_back), which the one counted beats by at most the tolerance; -1: not compared
  // (in-process timing; on CUDA a short call, or calls back to back within the kernel's claim).
  double back_to_back_speedup = -1;
  int samples = 0;
  double iqr_pct = 0, reference_iqr_pct = 0;
  double bytes = 0, flops = 0, gbps = 0, tflops = 0, pct_peak_bw = 0, pct_peak_flops = 0;
  // hidden_work_us: work on other streams (flag hidden_work), or the host time added to
  // kernel_us (flag host_time_added); timing.h's HiddenWork.
  double launch_overhead_us = 0, hidden_work_us = 0;
};

struct Verdict {
  enum class Status { kPassed, kFailed, kSkipped };

  // The case.
  std::string suite, op, case_name, arguments, trace_file;
  int trace_line = 0;
  int64_t count = 0;
  std::string models;
  // Who ran it.
  std::string backend, kernel_file, device;
  std::string gpu;       // the GPU CTest gave the entry, as CUDA_VISIBLE_DEVICES names it (gpu_slot.h); "": none
  std::string frontend;  // "tests" or "bench"
  // What happened.
  Status status = Status::kPassed;
  std::string skip_reason;
  int draws = 0;          // draws run
  int failed_draw = 0;    // 1-based; 0: none failed
  uint64_t salt = 0;
  std::vector<CheckOutcome> checks;  // of the last draw run
  std::vector<std::string> errors;   // every failure message, located ("<op> case <name> ... (draw i of n): ...")
  double max_abs_error = 0, max_rel_error = 0;  // of the first draw's outputs
  // A kernel's largest share over its checked calls of their host time spent in ATen operators
  // that compute (observe.h: OperatorCalls): 1 is a kernel whose work ATen does. Reported by the
  // kernel's process: shown, never trusted. -1: not measured (the reference, an error first).
  double aten_share = -1;
  std::optional<TimingFigures> timing;
  // suspect, overhead_dominated, speedup_review, hidden_work, host_time_added, wrong_when_timed,
  // timing_disagrees, back_to_back_time, speedup_uncertain
  std::vector<std::string> flags;
  // Wall milliseconds the case took in the supervisor that ran it (run_job_case); -1: none (a
  // verdict the planner made, for a case that never ran). What `backendbench run` plans the next
  // run's entries by (entry_costs.h).
  int64_t case_ms = -1;
  // Where a timed case's wall time went in the process that ran it (time_case), for ./bench's
  // counters: the checks before it, the measurement (here, or the kernel worker's request with
  // every attempt, the bound included), and of that this process's own timing of the reference
  // that bounds a worker's figure (0: not needed). Not written to the verdict file.
  struct TimeSpent {
    double checks_ms = 0, measurement_ms = 0, bound_ms = 0;
  };
  std::optional<TimeSpent> time_spent;

  bool passed() const { return status == Status::kPassed; }
  bool has_flag(const std::string& flag) const;
  // "<op> case <name> <arguments> (<file>:<line>)": how messages name a case.
  std::string where() const;
};

const char* status_name(Verdict::Status status);

// One line of JSON (no newline), with "schema": "backendbench-verdict" and "version".
std::string verdict_json(const Verdict& verdict);
// The verdict a line of verdict_json holds. Throws std::invalid_argument on another schema or
// version, or text that is not such a line.
Verdict verdict_from_json(const std::string& line);
// What a verdict file holds. A bad line never ends the reading: where it names its case (the
// operator, backend and case as strings), that case gets a failed verdict whose error is the
// line's, located ("<path>:<line>:1: error: ..."); a line that names none is in `unreadable`,
// located the same way, for the reader to fail what it expected from the file.
struct VerdictFile {
  std::vector<Verdict> verdicts;
  std::vector<std::string> unreadable;
};
// Every verdict of a JSON Lines file (blank lines skipped; a missing file holds none).
VerdictFile read_verdicts(const std::string& path);

// Creates `path` (and its folder) empty: a run's verdicts replace the last run's.
void start_verdicts(const std::string& path);
// Appends one line per verdict to `path` (created if missing), flushed at once, so a crash
// later in the run loses nothing already written. Throws std::runtime_error on I/O failure.
void append_verdict(const std::string& path, const Verdict& verdict);

// Why a CUDA kernel's case is skipped on a machine without a CUDA device: the one text, whether the
// test executable skips it or the backendbench command does without starting one.
std::string no_cuda_device_reason(const std::string& kernel_name);

}  // namespace backendbench
