// Sampling, the stopping rule and the guards of ./bench; see timing.h.
#include "backendbench/timing.h"

#include <malloc.h>
#include "backendbench/statistics.h"
#include "backendbench/verdict.h"

#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>
#include <limits>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#if __has_include(<cuda_runtime_api.h>) && __has_include(<c10/cuda/CUDAStream.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#define BACKENDBENCH_HAS_CUDA_RUNTIME 1
#endif

namespace backendbench {
namespace {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double interquartile_mean(std::vector<double> values, double* standard_deviation = nullptr) {
  if (values.empty()) return 0;
  const double low = quantile(values, 0.25), high = quantile(values, 0.75);
  double sum = 0, squares = 0;
  int count = 0;
  for (double value : values) {
    if (value < low || value > high) continue;
    sum += value;
    squares += value * value;
    ++count;
  }
  const double mean = sum / count;
  if (standard_deviation) *standard_deviation = std::sqrt(std::max(0.0, squares / count - mean * mean));
  return mean;
}

void fix_large_allocations() { mallopt(M_MMAP_THRESHOLD, 32 << 20); mallopt(M_TRIM_THRESHOLD, 1 << 30); }

void ready_output_blocks(c10::Device device, const std::vector<uint64_t>& block_bytes, int64_t copies) {
  std::vector<at::Tensor> blocks;
  for (int64_t i = 0; i < copies; ++i) {
    for (const uint64_t bytes : block_bytes) {
      at::Tensor block = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
      if (device.is_cpu()) block.fill_(0);  // its pages faulted in now, not in a timed call
      blocks.push_back(std::move(block));
    }
  }
}  // freed here

void release_cached_device_memory(c10::Device device) {
#if BACKENDBENCH_HAS_CUDA_RUNTIME
  if (device.is_cuda() && c10::cuda::CUDACachingAllocator::get() != nullptr) c10::cuda::CUDACachingAllocator::emptyCache();
#else
  (void)device;
#endif
}

CudaDeviceFacts cuda_device_facts(c10::Device device) {
#if BACKENDBENCH_HAS_CUDA_RUNTIME
  if (!device.is_cuda()) return {};
  static std::mutex mutex;
  static std::map<int, CudaDeviceFacts> known;
  const int index = device.index() < 0 ? 0 : device.index();
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = known.find(index);
  if (found == known.end()) {
    CudaDeviceFacts facts;
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, index) == cudaSuccess) facts = {properties.name, properties.totalGlobalMem};
    (void)cudaGetLastError();
    found = known.emplace(index, facts).first;
  }
  return found->second;
#else
  (void)device;
  return {};
#endif
}

double Samples::median_seconds() const { return quantile(values_, 0.5); }

double Samples::quantile_seconds(double q) const { return quantile(values_, std::clamp(q, 0.0, 1.0)); }

double Samples::mean_seconds() const {
  double sum = 0;
  for (double value : values_) sum += value;
  return values_.empty() ? 0 : sum / static_cast<double>(values_.size());
}

double Samples::interquartile_mean_seconds() const { return interquartile_mean(values_); }

double Samples::iqr_percent() const {
  const double median = median_seconds();
  return median > 0 ? 100.0 * (quantile(values_, 0.75) - quantile(values_, 0.25)) / median : 0;
}

LocationEstimate estimate_location(std::vector<double> values) {
  LocationEstimate estimate;
  if (values.empty()) return estimate;
  double deviation = 0;
  estimate.value = interquartile_mean(values, &deviation);
  // The middle half of n samples: about n/2 values.
  const double standard_error = deviation / std::sqrt(std::max(1.0, static_cast<double>(values.size()) / 2));
  estimate.relative_error = estimate.value != 0 ? standard_error / std::abs(estimate.value) : 0;
  return estimate;
}

bool StoppingRule::done(const std::vector<double>& values, double seconds_spent) const {
  const int taken = static_cast<int>(values.size());
  if (taken >= max_samples) return true;
  if (taken < min_samples) return false;
  if (seconds_spent >= seconds_cap) return true;
  return estimate_location(values).relative_error <= target_relative_error;
}

double PairedSamples::speedup() const { return interquartile_mean(ratios); }

SpeedupInterval speedup_interval(std::vector<double> ratios) {
  SpeedupInterval interval;
  const size_t n = ratios.size();
  interval.centre = interquartile_mean(ratios);
  const size_t trimmed = n / 4;  // from each end
  if (n < 4 || n - 2 * trimmed < 2) {  // too few to say
    interval.high = std::numeric_limits<double>::infinity();
    return interval;
  }
  std::sort(ratios.begin(), ratios.end());
  // Winsorized: the trimmed ends set to the nearest value kept.
  for (size_t i = 0; i < trimmed; ++i) {
    ratios[i] = ratios[trimmed];
    ratios[n - 1 - i] = ratios[n - 1 - trimmed];
  }
  double mean = 0;
  for (const double ratio : ratios) mean += ratio;
  mean /= static_cast<double>(n);
  double squares = 0;
  for (const double ratio : ratios) squares += (ratio - mean) * (ratio - mean);
  const double winsorized_sd = std::sqrt(squares / static_cast<double>(n - 1));
  const double kept = static_cast<double>(n - 2 * trimmed) / static_cast<double>(n);
  const double standard_error = winsorized_sd / (kept * std::sqrt(static_cast<double>(n)));
  const double half = t_quantile_975(static_cast<int>(n - 2 * trimmed) - 1) * standard_error;
  interval.low = std::max(0.0, interval.centre - half);
  interval.high = interval.centre + half;
  return interval;
}

void set_pair_figures(TimingFigures& figures, const PairedSamples& pair) {
  figures.reference_us = pair.reference.median_seconds() * 1e6;
  figures.kernel_us = pair.kernel.median_seconds() * 1e6;
  figures.kernel_mean_us = pair.kernel.mean_seconds() * 1e6;
  const SpeedupInterval interval = speedup_interval(pair.ratios);
  figures.speedup = interval.centre;
  figures.speedup_low = interval.low;
  figures.speedup_high = interval.high;
  figures.samples = pair.kernel.count();
  figures.iqr_pct = pair.kernel.iqr_percent();
  figures.reference_iqr_pct = pair.reference.iqr_percent();
}

void scale_speedup(TimingFigures& figures, double factor) {
  figures.speedup *= factor;
  figures.speedup_low *= factor;
  figures.speedup_high *= factor;
}

std::string why_uncertain(const TimingFigures& f) {
  const auto percent = [](double fraction) { return std::to_string(static_cast<int>(std::lround(100 * fraction))) + " %"; };
  if (f.other_load > kMostOtherLoadCores) {
    return "other processes took " + std::to_string(f.other_load).substr(0, 4) + " cores while it was measured (at most " +
           std::to_string(kMostOtherLoadCores).substr(0, 4) + " counts)";
  }
  if (f.cpu_waited > kMostCpuWaited) {
    return "some task waited for a core " + percent(f.cpu_waited) + " of the time it was measured (at most " +
           percent(kMostCpuWaited) + " counts)";
  }
  const double widest = std::max(f.speedup_high - f.speedup, f.speedup - f.speedup_low);
  if (!(f.speedup > 0) || !(widest <= kWidestCountedInterval * f.speedup)) {
    return "its 95 % interval [" + std::to_string(f.speedup_low) + ", " + std::to_string(f.speedup_high) + "] is wider than " +
           percent(kWidestCountedInterval) + " of its speedup on a side";
  }
  return "";
}

Timer::Timer(c10::Device device, StoppingRule rule, SamplingLayout layout)
    : device_(device), rule_(rule), layout_(layout) {
  if (device_.is_cuda()) {
    // By default twice the L2 of current GPUs (H200: 60 MiB): passing over it evicts the
    // inputs, and keeps the GPU busy while the host launches the call, so launch latency
    // stays out. The buffer is int32 because the read flush then sums into int64, which the
    // GPU does more slowly than a float sum: long enough for the host to stay ahead. On the
    // H200 a float sum let launch latency into small kernels' first samples
    // (self-consistency 88.7 % against 100 %).
    const at::TensorOptions options = at::TensorOptions().dtype(at::kInt).device(device_);
    l2_flush_ = at::zeros({layout_.flush_bytes / 4}, options);
    flush_sink_ = at::empty({}, options.dtype(at::kLong));
  }
}

void Timer::release_persisting_l2(const c10::Stream& stream) {
#if BACKENDBENCH_HAS_CUDA_RUNTIME
  // Lines a kernel marked persisting (an access-policy window on a stream or on its launches,
  // over a set-aside of L2 it asked for) survive the flush, which only evicts normal lines
  // (pygpubench #49, NVIDIA/cccl #9144): the set-aside goes back to none, every persisting line
  // to normal, and the timing stream's window away, before every timed launch.
  (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  (void)cudaCtxResetPersistingL2Cache();
  const cudaStream_t cuda_stream = c10::cuda::CUDAStream(c10::cuda::CUDAStream::UNCHECKED, stream).stream();
  cudaStreamAttrValue window{};
  if (cudaStreamGetAttribute(cuda_stream, cudaStreamAttributeAccessPolicyWindow, &window) == cudaSuccess &&
      window.accessPolicyWindow.num_bytes != 0) {
    const cudaStreamAttrValue none{};
    (void)cudaStreamSetAttribute(cuda_stream, cudaStreamAttributeAccessPolicyWindow, &none);
  }
  (void)cudaGetLastError();  // a GPU without persisting lines refuses the calls: nothing to release there
#else
  (void)stream;
#endif
}

void Timer::flush_l2() {
  if (layout_.flush == SamplingLayout::Flush::kRead) {
    at::sum_out(flush_sink_, l2_flush_);
  } else {
    l2_flush_.zero_();
  }
}

double Timer::time(const MakeInputs& make, const Call& call) { return time_batch(make, {&call}).front(); }

std::vector<double> Timer::time_batch(const MakeInputs& make, const std::vector<const Call*>& calls) {
  std::vector<Inputs> inputs;
  for (size_t i = 0; i < calls.size(); ++i) inputs.push_back(make());
  std::vector<double> seconds;
  if (!device_.is_cuda()) {
    for (size_t i = 0; i < calls.size(); ++i) {
      const double start = now_seconds();
      (*calls[i])(std::move(inputs[i]));
      seconds.push_back(now_seconds() - start);
    }
    return seconds;
  }
  while (batch_events_.size() < 2 * calls.size()) batch_events_.emplace_back(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
  const c10::impl::DeviceGuardImplInterface* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  const c10::Stream stream = guard->getStream(device_);
  // A head start: the GPU was idle at the synchronisation; three flushes keep it busy while the
  // host queues the batch, so the first sample does not wait on the host either.
  for (int i = 0; i < 3; ++i) flush_l2();
  for (size_t i = 0; i < calls.size(); ++i) {
    release_persisting_l2(stream);
    flush_l2();
    batch_events_[2 * i].record(stream);
    (*calls[i])(std::move(inputs[i]));
    batch_events_[2 * i + 1].record(stream);
  }
  batch_events_[2 * calls.size() - 1].synchronize();
  for (size_t i = 0; i < calls.size(); ++i) seconds.push_back(batch_events_[2 * i].elapsedTime(batch_events_[2 * i + 1]) / 1e3);
  return seconds;
}

Samples Timer::sample_one(const MakeInputs& make, const Call& call) {
  Samples samples;
  const double started = now_seconds();
  const std::vector<const Call*> batch(layout_.batch_pairs, &call);
  while (!rule_.done(samples.values(), now_seconds() - started)) {
    for (double seconds : time_batch(make, batch)) samples.add(seconds);
    if (after_batch) after_batch();
  }
  return samples;
}

PairedSamples Timer::sample_interleaved(const MakeInputs& make, const Call& reference, const Call& kernel) {
  PairedSamples pair;
  const double started = now_seconds();
  // ABBA order within each batch, and batches led alternately by each side (ABBA..., then
  // BAAB...): drift (clocks, temperature) and any cost of a batch's first position hit both
  // sides alike.
  for (int batch_number = 0; !rule_.done(pair.ratios, now_seconds() - started); ++batch_number) {
    auto reference_first = [&](int i) { return (i + batch_number) % 2 == 0; };
    std::vector<const Call*> batch;
    for (int i = 0; i < layout_.batch_pairs; ++i) {
      batch.push_back(reference_first(i) ? &reference : &kernel);
      batch.push_back(reference_first(i) ? &kernel : &reference);
    }
    const std::vector<double> seconds = time_batch(make, batch);
    for (int i = 0; i < layout_.batch_pairs; ++i) {
      const double reference_seconds = seconds[2 * i + (reference_first(i) ? 0 : 1)];
      const double kernel_seconds = seconds[2 * i + (reference_first(i) ? 1 : 0)];
      pair.reference.add(reference_seconds);
      pair.kernel.add(kernel_seconds);
      pair.ratios.push_back(kernel_seconds > 0 ? reference_seconds / kernel_seconds : 0);
    }
    if (after_batch) after_batch();
  }
  return pair;
}

double Timer::launch_overhead_seconds() {
  if (!device_.is_cuda()) return 0;
  static std::map<int, double> measured;  // per device, once per process
  auto found = measured.find(device_.index());
  if (found == measured.end()) {
    at::Tensor one = at::empty({1}, at::TensorOptions().device(device_));
    Samples samples;
    for (int i = 0; i < 50; ++i) {
      samples.add(time([] { return Inputs{}; }, [&](Inputs) { one.fill_(1); return Inputs{}; }));
    }
    found = measured.emplace(device_.index(), samples.median_seconds()).first;
  }
  return found->second;
}

Timer::HostTimes Timer::host_times(const MakeInputs& make, const Call& call) {
  const c10::impl::DeviceGuardImplInterface* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  auto synchronize_all = [&] {
    for (c10::DeviceIndex d = 0; d < guard->deviceCount(); ++d) guard->synchronizeDevice(d);
  };
  Inputs inputs = make();
  release_persisting_l2(guard->getStream(device_));
  flush_l2();
  synchronize_all();
  const double start = now_seconds();
  call(std::move(inputs));
  const double returned = now_seconds();
  synchronize_all();
  return {returned - start, now_seconds() - returned};
}

HiddenWork judge_hidden_work(const std::vector<HiddenWorkReading>& readings, bool count_call_time) {
  constexpr double kNoiseSeconds = 20e-6;
  HiddenWork smallest{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  bool streams_cleared = readings.empty(), host_cleared = readings.empty() || !count_call_time;
  for (const HiddenWorkReading& r : readings) {
    const double noise = std::max(kNoiseSeconds, 0.25 * r.kernel_events);
    const double on_streams = (r.kernel_wait - r.kernel_events) - (r.reference_wait - r.reference_events);
    const double on_host = (r.kernel_call + r.kernel_wait - r.kernel_events) -
                           (r.reference_call + r.reference_wait - r.reference_events);
    if (on_streams <= noise) streams_cleared = true;
    if (on_host <= noise) host_cleared = true;
    smallest.on_other_streams = std::min(smallest.on_other_streams, on_streams);
    smallest.on_the_host = std::min(smallest.on_the_host, on_host);
  }
  return {streams_cleared ? 0 : smallest.on_other_streams, host_cleared ? 0 : smallest.on_the_host};
}

HiddenWork Timer::hidden_work(const MakeInputs& make, const Call& reference, const Call& kernel, bool count_call_time) {
  constexpr int kMeasurements = 3;
  std::vector<HiddenWorkReading> readings;
  for (int measurement = 0; measurement < kMeasurements; ++measurement) {
    Samples reference_call, reference_wait, reference_events, kernel_call, kernel_wait, kernel_events;
    for (int i = 0; i < 5; ++i) {
      const HostTimes reference_host = host_times(make, reference), kernel_host = host_times(make, kernel);
      reference_call.add(reference_host.call);
      reference_wait.add(reference_host.wait);
      kernel_call.add(kernel_host.call);
      kernel_wait.add(kernel_host.wait);
      reference_events.add(time(make, reference));
      kernel_events.add(time(make, kernel));
    }
    readings.push_back({reference_call.median_seconds(), reference_wait.median_seconds(), reference_events.median_seconds(),
                        kernel_call.median_seconds(), kernel_wait.median_seconds(), kernel_events.median_seconds()});
    const HiddenWork judged = judge_hidden_work(readings, count_call_time);
    if (judged.on_other_streams == 0 && judged.on_the_host == 0) break;
  }
  return judge_hidden_work(readings, count_call_time);
}

}  // namespace backendbench
