// How ./bench measures: samples of one call on its device, the reference and a kernel
// interleaved on the same inputs, and a noise-based rule for when to stop sampling.
//
// CUDA: before each sample the L2 cache is flushed (by default a read of 128 MiB, which leaves
// clean lines and keeps the GPU busy while the host launches the call, so host launch latency
// stays out; SamplingLayout); the sample is the time between CUDA events recorded on the
// current stream around the call. CPU: the wall clock around the call.
#pragma once

#include <ATen/ATen.h>

#include <c10/core/Event.h>

#include <functional>
#include <string>
#include <vector>

#include "backendbench/settings.h"

namespace backendbench {

// Fixes how this process's large CPU allocations are made, so that a call's cost does not move
// with the process's history: glibc's mallopt thresholds, which otherwise move (a 2048x2048 relu
// read 0.6 ms in one attempt and 5 ms in the next on the 2-core machine, its reference alike, and
// differently in the supervisor than in the kernel's worker). Blocks up to 32 MiB (M_MMAP_THRESHOLD's
// most) come from the heap, and up to 1 GiB of freed heap stays mapped (a run's kept outputs and
// inputs), so that a freed output's block is found again hot by the next call, as a long-running
// program finds it. Fixed at 128 KiB
// instead, every output was a mapping of its own, faulted in afresh on every call: the 2048x2048
// relu's reference read 4-5 ms back to back instead of 1.1-1.4 ms, and a kernel that kept its
// blocks (a deferral, a relay of forged answers) read 1.6-2.0x ATen back to back by the faults alone.
// Every process that times calls it first: the kernel workers and the supervisors.
void fix_large_allocations();
// Makes memory for `copies` of each of `block_bytes` ready where this process's next allocations
// of those sizes on `device` find it: allocated through ATen, on a CPU every page written, and
// freed (a CPU's heap keeps it mapped: fix_large_allocations; CUDA's caching allocator keeps it).
// A run of calls back to back keeps every call's outputs until they are judged, so its calls do
// not reuse one freed block as the paired samples do: without it a run's first outputs on a CPU
// are fresh pages faulted in inside the clock, and on CUDA fresh allocations of the driver's.
// Made ready in the kernel's worker and in the supervisor alike, both sides' outputs find memory
// alike (a kernel that keeps a pool of its own gains nothing from faults the reference pays).
void ready_output_blocks(c10::Device device, const std::vector<uint64_t>& block_bytes, int64_t copies);
// Hands the device memory this process's CUDA caching allocator holds but no tensor uses back to
// the device (nothing on a CPU or without the CUDA runtime). Called when a case's timing is done,
// by the kernel workers and the supervisors: each keeps its peak otherwise, and on an 80 GiB H100
// the workers and the supervisor of nine kernels of the 914-case subset held 31-35 GiB each
// between cases, so that later cases failed as "CUDA out of memory" (2026-12-05).
void release_cached_device_memory(c10::Device device);
// What the CUDA runtime says of a device, asked once per device (cudaGetDeviceProperties reads
// every attribute, and every timed case asks: its roofline, and a kernel worker's bound). Empty
// name and 0 bytes on a CPU, in a build without the CUDA runtime, or where the call fails.
struct CudaDeviceFacts {
  std::string name;
  uint64_t memory_bytes = 0;
};
CudaDeviceFacts cuda_device_facts(c10::Device device);

// A set of timings, seconds.
class Samples {
 public:
  void add(double seconds) { values_.push_back(seconds); }
  int count() const { return static_cast<int>(values_.size()); }
  double median_seconds() const;
  double quantile_seconds(double q) const;  // q in [0, 1], interpolated
  double mean_seconds() const;
  double interquartile_mean_seconds() const;  // mean of the middle half: robust, and smooth where timers are coarse
  double iqr_percent() const;  // interquartile range as a percentage of the median
  const std::vector<double>& values() const { return values_; }

 private:
  std::vector<double> values_;
};

// The interquartile mean of `values` (the mean of those between the 25th and 75th
// percentiles) and its relative standard error (their standard deviation / √count). Unlike
// the median's, this estimate neither jumps between the discrete values of a coarse timer nor
// claims zero error when half the samples are equal.
struct LocationEstimate {
  double value = 0;
  double relative_error = 0;
};
LocationEstimate estimate_location(std::vector<double> values);

struct PairedSamples {
  Samples reference;
  Samples kernel;
  std::vector<double> ratios;  // reference/kernel of each interleaved pair
  double speedup() const;      // interquartile mean of the per-pair ratios
};

// A speedup and its 95 % interval, from the pairs' ratios: their interquartile (25 %-trimmed)
// mean ± t · its standard error, Tukey and McLaughlin's (the winsorized standard deviation over
// half of √n; n − 2g − 1 degrees of freedom, g trimmed from each end). Fewer than 4 ratios say
// nothing: [0, infinity]. Pairs taken close together share the machine's moments, so this is
// the noise within one measurement, not between runs; the machine's load says the rest
// (TimingFigures::other_load).
struct SpeedupInterval {
  double centre = 0, low = 0, high = 0;
};
SpeedupInterval speedup_interval(std::vector<double> ratios);

struct TimingFigures;  // verdict.h
// The figures a verdict counts of interleaved pairs: the medians, the kernel's mean, the speedup
// (the pairs' ratios' interquartile mean) and its interval, the sample count and each side's
// spread. One place, for a measurement in this process (measure_case) and a kernel worker's pairs
// (counted_measurement).
void set_pair_figures(TimingFigures& figures, const PairedSamples& pair);

// The speedup and its interval times `factor` (host time added to the kernel's, or the figures
// replaced by the supervisor's own).
void scale_speedup(TimingFigures& figures, double factor);

// A CPU speedup is counted only when its interval is within kWidestCountedInterval of it on
// either side, other processes took at most kMostOtherLoadCores of the machine's cores while it
// was measured, and some task waited for a core at most kMostCpuWaited of that time (either
// where measured); a case measured again and still unsure is flagged speedup_uncertain
// and counts no gain (run_scores.h, counted_speedup). On the 2-core machine an honest relu's
// 1024x1024 case read 0.53x to 6.7x across runs of one commit while other tests ran.
constexpr double kWidestCountedInterval = 0.10;
constexpr double kMostOtherLoadCores = 0.25;
constexpr double kMostCpuWaited = 0.25;
// Why a speedup is too unsure to count ("" when it is not).
std::string why_uncertain(const TimingFigures& figures);

// A speedup above this is flagged (counter speedup_review): check the kernel does the work.
constexpr double kSpeedupReviewThreshold = 10.0;

// One measurement of hidden work: medians over its calls, seconds. `call` is the host time of
// the call itself (the devices idle when it starts), `wait` the host's wait from its return until
// every device is done, `events` the call as the events around it on the current stream read it,
// timed after a cache flush as the samples are.
struct HiddenWorkReading {
  double reference_call = 0, reference_wait = 0, reference_events = 0;
  double kernel_call = 0, kernel_wait = 0, kernel_events = 0;
};

// What the events on the current stream did not see, beyond the reference's own such time, in
// seconds; 0 where it is within noise (20 µs or a quarter of the kernel's event time) in any
// reading, else the smallest over the readings: work on another stream costs every call, while
// a host that stalls once shows in one reading only.
//   on_other_streams: from the wait after the call returns, work still running on other streams
//     or devices. Disqualifying (the `hidden_work` flag): the kernel's time misses its work.
//   on_the_host: from the call's own host time and that wait together (0 without
//     `count_call_time`). A kernel of several launches spends host time on each, which the
//     events, queued behind the flush, do not see; work computed on the host while the flush
//     runs shows the same way, and the two cannot be told apart by time. So it is not a failure:
//     it is added to the kernel's time (the `host_time_added` flag), which leaves a host-computed
//     answer no speedup and an honest many-launch kernel the time its launches cost.
struct HiddenWork {
  double on_other_streams = 0, on_the_host = 0;
};
HiddenWork judge_hidden_work(const std::vector<HiddenWorkReading>& readings, bool count_call_time);

class Timer {
 public:
  using Inputs = std::vector<c10::IValue>;
  using MakeInputs = std::function<Inputs()>;
  using Call = std::function<Inputs(Inputs)>;

  Timer(c10::Device device, StoppingRule rule, SamplingLayout layout);

  // Called after each batch of samples has finished (the device synchronised), e.g. to check
  // the batch's results and refresh input values before the next one.
  std::function<void()> after_batch;

  // Seconds of one call on fresh inputs (made outside the timed region).
  double time(const MakeInputs& make, const Call& call);
  // Seconds of each call in order, each on fresh inputs made beforehand. On CUDA the samples
  // are queued without waiting in between (one synchronisation per batch), as
  // triton.testing.do_bench queues its repetitions; each is still flushed and event-timed.
  std::vector<double> time_batch(const MakeInputs& make, const std::vector<const Call*>& calls);
  Samples sample_one(const MakeInputs& make, const Call& call);
  // Reference and kernel alternately (ABBA order), each sample cold; stops on the noise of
  // the per-pair ratio.
  PairedSamples sample_interleaved(const MakeInputs& make, const Call& reference, const Call& kernel);

  // GPU time of the smallest ATen launch (a one-element fill) on this device, measured once;
  // cases within 1.3× of it are overhead-dominated. 0 on the CPU.
  double launch_overhead_seconds();

  // Work a kernel does outside what the events on the current stream see (HiddenWork, above):
  // the host-timed call with every device synchronised, minus the event-timed call, compared
  // with the same difference for the reference, in up to three measurements of 5 calls each.
  // `count_call_time` false leaves the call's own host time out (only the wait after it returns
  // counts): for a Python kernel, whose launch from the interpreter costs tens of microseconds
  // of host time, so only work on other streams is measured there.
  HiddenWork hidden_work(const MakeInputs& make, const Call& reference, const Call& kernel, bool count_call_time);

 private:
  // The call's host time and the wait from its return until every device is done (the devices
  // idle when it starts).
  struct HostTimes {
    double call = 0, wait = 0;
  };
  HostTimes host_times(const MakeInputs& make, const Call& call);
  // No L2 set aside for persisting lines, none persisting, no window on `stream` (CUDA).
  static void release_persisting_l2(const c10::Stream& stream);
  void flush_l2();

  c10::Device device_;
  StoppingRule rule_;
  SamplingLayout layout_;
  at::Tensor l2_flush_;
  at::Tensor flush_sink_;  // the read flush's one-element result
  std::vector<c10::Event> batch_events_;  // 2 per sample of a batch, reused: creating events costs host time
};

}  // namespace backendbench
