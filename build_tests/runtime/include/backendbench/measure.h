// Timing one backend against the reference in the process that calls it, as plain functions
// that return data: the supervisor times in-process backends so (run_case.h: time_case), a kernel
// worker its kernel (worker/serve.h), keeping the timed outputs for its supervisor to judge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/timing.h"
#include "backendbench/verdict.h"

namespace backendbench {

class Timer;

// How a backend is named in messages: its name, and its source file where it has one.
std::string backend_label(const Backend& backend);

// One batch's last kernel outputs, as a kernel worker kept them for its supervisor to judge
// (worker.h): the batch's number and which of the case's value sets it ran on.
struct TimedOutput {
  int batch = 0;
  size_t value_set = 0;
  Stack outputs;
};

// Which batches' last outputs a kernel worker keeps: every batch's while they fit in
// `budget_bytes`, past it every second batch's, then every fourth's (those kept thinned alike),
// and always the last batch's (beyond the budget by one batch's outputs). Each is a copy, made
// after its batch and before the values change for the next.
class TimedOutputSampler {
 public:
  explicit TimedOutputSampler(uint64_t budget_bytes) : budget_bytes_(budget_bytes) {}
  void offer(int batch, size_t value_set, const Stack& outputs);
  std::vector<TimedOutput> take();  // in batch order

 private:
  uint64_t budget_bytes_, kept_bytes_ = 0;
  int stride_ = 1;
  std::vector<TimedOutput> kept_;
  std::optional<TimedOutput> newest_;  // the last batch offered, kept whatever the stride
};

// What timing measured where the backend runs, before the roofline: the figures (no roofline
// fields), the flags it raised (wrong_when_timed, speedup_review, hidden_work, host_time_added)
// and its errors.
struct Measurement {
  TimingFigures figures;  // kernel_us: the backend's median
  std::vector<std::string> flags, errors;
  // The reference's outputs on the first value set, where this process computed them while
  // measuring (the roofline counts their bytes instead of calling the reference once more).
  std::optional<Stack> reference_outputs;
  // Wall milliseconds this process spent timing the reference itself to bound a kernel worker's
  // figure (worker.h), over every attempt; 0 where it was not needed.
  double bound_ms = 0;
  // A kernel worker's measurement: the reference's time as this process measured it itself; 0
  // where it did not (a worker's figure its floor bounds). In this process, figures' own.
  double supervisor_reference_us = 0;
  // The interleaved pairs the figures come from (seconds, in the order timed): what a kernel
  // worker sends, for the supervisor to compute every figure it counts (worker.h).
  std::vector<double> reference_samples, kernel_samples;
  // In a kernel worker: the batches' last kernel outputs, for the supervisor to judge.
  std::vector<TimedOutput> timed_outputs;
};
// Times `backend` against the reference on `value_sets` (the case's draws; the first is the
// one timed, the others alternate between batches) in this process. Each batch's last kernel
// result is compared here with the reference's on the same values; in a kernel worker
// (`keep_outputs_bytes` set), where nothing may be judged, they are kept instead
// (TimedOutputSampler, that budget) for the supervisor to compare with its own reference.
Measurement measure_case(const std::string& op_display, const c10::OperatorHandle& handle, const Backend& backend,
                         c10::Device device, const std::vector<Stack>& value_sets, Timer& timer, const std::string& where,
                         std::optional<uint64_t> keep_outputs_bytes = std::nullopt);

// A flag that makes a timed case count as failed in the scores (speedup 1.0, operator
// incorrect): `suspect` (faster than the hardware allows), `hidden_work` (work left on other
// streams), `wrong_when_timed` (right when checked, wrong when timed), `timing_disagrees`
// (a kernel worker's figures disagree with what the supervisor observed, worker.h).
bool is_disqualifying_flag(const std::string& flag);

}  // namespace backendbench
