// ./bench: one Google Benchmark per (suite, operator, case, backend), named
// <suite>/<operator>/<case>/<backend> so that --benchmark_filter regexes select them.
//
// Each benchmark runs exactly one Google Benchmark iteration (Iterations(1), manual time)
// in which the harness takes its own samples: warm-up, then samples until a time budget or
// a sample cap, and reports the median. This keeps every case well under a second, where
// Google Benchmark's default minimum time would spend seconds on microsecond cases.
// CPU: wall clock around the call. CUDA: events on the current stream, L2 flushed before
// every sample (cold cache).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <benchmark/benchmark.h>
#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "backendbench/harness.h"
#include "model/naming.h"

namespace backendbench {
namespace {

struct SamplingPolicy {
  double budget_seconds = 0.05;  // measured time per benchmark
  int min_samples = 3;
  int max_samples = 200;
};

SamplingPolicy sampling_policy() {
  SamplingPolicy policy;
  if (const char* budget = std::getenv("BACKENDBENCH_BENCH_SECONDS")) policy.budget_seconds = std::atof(budget);
  if (const char* samples = std::getenv("BACKENDBENCH_BENCH_MAX_SAMPLES")) policy.max_samples = std::max(1, std::atoi(samples));
  policy.min_samples = std::min(policy.min_samples, policy.max_samples);
  return policy;
}

// Seconds of one call, measured on the inputs' device.
class Timer {
 public:
  explicit Timer(c10::Device device) : device_(device) {
    if (device_.is_cuda()) {
      // Larger than the L2 of current GPUs (H200: 60 MiB): writing it evicts the inputs.
      l2_flush_ = at::empty({64 << 20}, at::TensorOptions().dtype(at::kInt).device(device_));
    }
  }

  template <typename Call>
  double time(const Call& call) {
    if (!device_.is_cuda()) {
      const auto start = std::chrono::steady_clock::now();
      call();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const c10::impl::DeviceGuardImplInterface* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    const c10::Stream stream = guard->getStream(device_);
    l2_flush_.zero_();
    c10::Event start(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
    c10::Event stop(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
    start.record(stream);
    call();
    stop.record(stream);
    stop.synchronize();
    return start.elapsedTime(stop) / 1e3;
  }

 private:
  c10::Device device_;
  at::Tensor l2_flush_;
};

void run_benchmark(benchmark::State& state, const OperatorSpec* op, const CaseSpec* spec, const VariantSpec* variant) {
  const c10::Device device = device_of(variant);
  if (device.is_cuda() && !cuda_available()) {
    state.SkipWithError("CUDA kernel; this machine has no CUDA device");
    for (auto _ : state) {
    }
    return;
  }
  std::vector<c10::IValue> inputs;
  c10::OperatorHandle handle = find_operator(*op);
  std::optional<c10::KernelFunction> kernel;
  try {
    inputs = materialize(handle.schema(), *spec, device);
    if (variant) kernel = variant->factory();
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
    for (auto _ : state) {
    }
    return;
  }
  auto call = [&] {
    if (kernel) {
      call_kernel(handle, *kernel, inputs, device);
    } else {
      call_reference(handle, inputs);
    }
  };
  const SamplingPolicy policy = sampling_policy();
  Timer timer(device);
  std::vector<double> samples;
  for (auto _ : state) {
    try {
      timer.time(call);  // warm-up: first-call costs (allocation, caching) stay out
      double measured = 0;
      // Until the budget is spent (with at least min_samples, unless the samples alone already
      // took four budgets: one call of a huge CPU case is then the measurement).
      auto more = [&] {
        const int taken = static_cast<int>(samples.size());
        if (taken >= policy.max_samples) return false;
        if (measured < policy.budget_seconds) return true;
        return taken < policy.min_samples && measured < 4 * policy.budget_seconds;
      };
      while (more()) {
        samples.push_back(timer.time(call));
        measured += samples.back();
      }
    } catch (const std::exception& error) {
      state.SkipWithError(error.what());
      break;
    }
    std::sort(samples.begin(), samples.end());
    state.SetIterationTime(samples[samples.size() / 2]);
  }
  if (!samples.empty()) {
    state.counters["samples"] = static_cast<double>(samples.size());
    state.counters["min_us"] = samples.front() * 1e6;
    state.counters["max_us"] = samples.back() * 1e6;
  }
  state.SetLabel(device.str());
}

void register_benchmarks() {
  for (const OperatorSpec* op : registered_operators()) {
    for (size_t c = 0; c < op->case_count; ++c) {
      const CaseSpec* spec = &op->cases[c];
      const model::OperatorName name = *model::OperatorName::from_user(op->display);
      auto add = [&](const std::string& backend, const VariantSpec* variant) {
        const std::string benchmark = model::benchmark_name(op->suite, name, spec->name, backend);
        benchmark::RegisterBenchmark(benchmark.c_str(), run_benchmark, op, spec, variant)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMicrosecond);
      };
      add("aten", nullptr);
      for (size_t v = 0; v < op->variant_count; ++v) add(op->variants[v].name, &op->variants[v]);
    }
  }
}

}  // namespace
}  // namespace backendbench

int main(int argc, char** argv) {
  backendbench::register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
