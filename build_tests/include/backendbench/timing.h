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
#include <vector>

namespace backendbench {

// A set of timings, seconds.
class Samples {
 public:
  void add(double seconds) { values_.push_back(seconds); }
  int count() const { return static_cast<int>(values_.size()); }
  double median_seconds() const;
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

// When to stop: at least `min_samples`; then as soon as the interquartile mean is known to
// `target_relative_error`, or at `max_samples`, or when `seconds_cap` of wall time is spent.
struct StoppingRule {
  int min_samples = 20;
  int max_samples = 2000;
  double target_relative_error = 0.003;
  double seconds_cap = 0.1;

  bool done(const std::vector<double>& values, double seconds_spent) const;
  static StoppingRule from_environment();  // BACKENDBENCH_BENCH_SECONDS, _MAX_SAMPLES, _TARGET_ERROR
};

struct PairedSamples {
  Samples reference;
  Samples kernel;
  std::vector<double> ratios;  // reference/kernel of each interleaved pair
  double speedup() const;      // interquartile mean of the per-pair ratios
};

// How samples are laid out on a CUDA device.
struct SamplingLayout {
  enum class Flush { kWrite, kRead };
  // kRead sums the flush buffer, which leaves the L2 full of clean lines. kWrite zeroes it, as
  // triton.testing.do_bench does, which leaves dirty ones: the call after the flush then pays
  // for writing them back, and a second call in the same sample does not.
  Flush flush = Flush::kRead;
  int64_t flush_bytes = int64_t{128} << 20;
  int batch_pairs = 4;  // samples (pairs, when interleaved) queued before one synchronisation

  // triton.testing.do_bench's layout: a 256 MiB write before each sample, and samples queued
  // back to back (64 pairs per synchronisation). Its times agree with do_bench's; the default
  // layout reads lower on small kernels, which do_bench charges for the flush's dirty lines
  // and for a GPU kept busy without pause.
  static SamplingLayout do_bench();
  // The default, or do_bench() with BACKENDBENCH_LAYOUT=do_bench; then BACKENDBENCH_FLUSH=
  // write|read, BACKENDBENCH_FLUSH_MIB and BACKENDBENCH_BATCH_PAIRS override single fields.
  // Throws std::invalid_argument, naming the variable and the accepted values, on others.
  static SamplingLayout from_environment();
};

// A speedup above this is flagged (counter speedup_review): check the kernel does the work.
constexpr double kSpeedupReviewThreshold = 10.0;

class Timer {
 public:
  using Inputs = std::vector<c10::IValue>;
  using MakeInputs = std::function<Inputs()>;
  using Call = std::function<Inputs(Inputs)>;

  explicit Timer(c10::Device device, StoppingRule rule = StoppingRule::from_environment(),
                 SamplingLayout layout = SamplingLayout::from_environment());

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

  // Work a kernel leaves outside the current stream (another stream or device), which events
  // on the current stream miss: the host-timed call with every device synchronised, minus the
  // event-timed call, compared with the same difference for the reference. Returns the excess
  // in seconds when it is beyond noise (20 µs and a quarter of the kernel's time), else 0.
  double hidden_work_seconds(const MakeInputs& make, const Call& reference, const Call& kernel);

 private:
  double host_synchronized_seconds(const MakeInputs& make, const Call& call);
  void flush_l2();

  c10::Device device_;
  StoppingRule rule_;
  SamplingLayout layout_;
  at::Tensor l2_flush_;
  at::Tensor flush_sink_;  // the read flush's one-element result
  std::vector<c10::Event> batch_events_;  // 2 per sample of a batch, reused: creating events costs host time
};

}  // namespace backendbench
