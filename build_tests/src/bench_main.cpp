// ./bench: one Google Benchmark per (suite, operator, case, backend), named
// <suite>/<operator>/<case>/<backend> so that --benchmark_filter regexes select them.
//
// Each benchmark runs exactly one Google Benchmark iteration (Iterations(1), manual time) in
// which the harness takes its own samples (timing.h): on CUDA, cold-cache samples timed with
// events on the current stream; the reference and the kernel interleaved on the same inputs,
// so their ratio (the speedup) is stable; sampling stops when the median is known well enough
// (noise-based, with a minimum and a time cap). Counters carry the medians, dispersion,
// speedup, roofline figures and guard flags; after the run a summary (per-operator and overall
// geomean speedup, perf@p) is printed and written as JSON (--backendbench_summary=<file>).
//
// Calibration backends (--backendbench_calibration): `aten_self` measures the aten operator as
// both reference and kernel (two independent measurements), `aten_twice` a kernel that runs the
// aten operator twice; they test the instrument itself (scripts/timing_targets.py).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "backendbench/checks.h"
#include "backendbench/harness.h"
#include "backendbench/operator_policies.h"
#include "backendbench/roofline.h"
#include "backendbench/scores.h"
#include "backendbench/timing.h"
#include "language/naming.h"

namespace backendbench {
namespace {

enum class Backend { kAten, kKernel, kAtenSelf, kAtenTwice };

std::vector<ScoredCase>& results() {
  static std::vector<ScoredCase> all;
  return all;
}

// Achieved GB/s and TFLOP/s, % of the device's peaks, and two flags: `suspect` (faster than
// the bytes or FLOPs allow at peak: the kernel cannot have done the work) and
// `overhead_dominated` (within 1.3× of an empty launch: the time is launch overhead).
void add_roofline_counters(benchmark::State& state, const OperatorSpec& op, const std::vector<c10::IValue>& inputs,
                           const std::vector<c10::IValue>& outputs, double seconds, double launch_overhead_seconds,
                           c10::Device device) {
  if (seconds <= 0) return;
  const Work work = work_of(op.display, inputs, outputs);
  const Peaks peaks = device_peaks(device, work.dtype);
  state.counters["bytes"] = work.bytes;
  state.counters["flops"] = work.flops;
  state.counters["GBps"] = work.bytes / seconds / 1e9;
  state.counters["TFLOPps"] = work.flops / seconds / 1e12;
  bool suspect = false;
  if (peaks.bytes_per_second > 0) {
    state.counters["pct_peak_bw"] = 100 * work.bytes / seconds / peaks.bytes_per_second;
    suspect = suspect || work.bytes / peaks.bytes_per_second > 1.05 * seconds;
  }
  if (peaks.flops_per_second > 0) {
    state.counters["pct_peak_flops"] = 100 * work.flops / seconds / peaks.flops_per_second;
    suspect = suspect || work.flops / peaks.flops_per_second > 1.05 * seconds;
  }
  if (suspect) state.counters["suspect"] = 1;
  if (launch_overhead_seconds > 0) {
    state.counters["launch_overhead_us"] = launch_overhead_seconds * 1e6;
    if (seconds < 1.3 * launch_overhead_seconds) state.counters["overhead_dominated"] = 1;
  }
}

void skip(benchmark::State& state, const std::string& why) {
  state.SkipWithError(why.c_str());
  for (auto _ : state) {
  }
}

void run_benchmark(benchmark::State& state, const OperatorSpec* op, const CaseSpec* spec, const VariantSpec* variant,
                   Backend backend, const std::string& backend_name) {
  const c10::Device device = backend == Backend::kKernel ? device_of(variant) : default_device();
  if (device.is_cuda() && !cuda_available()) return skip(state, "CUDA kernel; this machine has no CUDA device");
  std::vector<c10::IValue> inputs;
  c10::OperatorHandle handle = find_operator(*op);
  std::optional<c10::KernelFunction> kernel;
  try {
    inputs = materialize(handle.schema(), *spec, device);
    if (variant) kernel = variant->factory();
  } catch (const std::exception& error) {
    return skip(state, error.what());
  }
  if (auto reason = device_cost_limitation(op->display, device, inputs)) return skip(state, *reason);
  // In-place operators write their inputs: each call gets fresh copies, made outside the timed
  // region, so every sample sees the same values.
  const bool writes_inputs = !written_arguments(handle.schema()).empty();
  auto fresh = [&] { return writes_inputs ? clone_inputs(inputs) : inputs; };
  // aten_twice runs its second call on a copy: the same work again, from cold memory (the
  // flush before each sample evicts both copies), not a warm re-read of the first call's data.
  const std::vector<c10::IValue> second_copy = backend == Backend::kAtenTwice ? clone_inputs(inputs) : inputs;
  auto reference = [&](std::vector<c10::IValue> stack) { return call_reference(handle, std::move(stack)); };
  auto candidate = [&](std::vector<c10::IValue> stack) -> std::vector<c10::IValue> {
    switch (backend) {
      case Backend::kKernel: return call_kernel(handle, *kernel, std::move(stack), device);
      case Backend::kAtenTwice:
        call_reference(handle, second_copy);  // in place, it drifts; only its time matters
        return call_reference(handle, std::move(stack));
      default: return call_reference(handle, std::move(stack));
    }
  };

  Timer timer(device);
  ScoredCase result{op->display, spec->name, backend_name, spec->arguments};
  std::vector<c10::IValue> expected;
  try {
    expected = reference(fresh());  // warm-up, and the outputs the roofline counts
    if (backend == Backend::kAten) {
      const Samples samples = timer.sample_one(fresh, reference);
      state.SetIterationTime(samples.median_seconds());
      state.counters["samples"] = samples.count();
      state.counters["median_us"] = samples.median_seconds() * 1e6;
      state.counters["mean_us"] = samples.mean_seconds() * 1e6;
      state.counters["iqr_pct"] = samples.iqr_percent();
      result.reference_us = result.kernel_us = samples.median_seconds() * 1e6;
      result.kernel_mean_us = samples.mean_seconds() * 1e6;
      result.correct = true;
      result.speedup = 1;
      add_roofline_counters(state, *op, inputs, expected, samples.median_seconds(), timer.launch_overhead_seconds(), device);
    } else {
      const std::vector<c10::IValue> actual = candidate(fresh());  // warm-up and pre-check
      // A quick check that it computes the right thing; the correctness tests are the real one.
      result.correct = compare_outputs(expected, actual).equal;
      if (!result.correct) {
        results().push_back(result);
        return skip(state, "the kernel's outputs differ from the reference (run the correctness tests)");
      }
      const PairedSamples pair = timer.sample_interleaved(fresh, reference, candidate);
      state.SetIterationTime(pair.kernel.median_seconds());
      result.reference_us = pair.reference.median_seconds() * 1e6;
      result.kernel_us = pair.kernel.median_seconds() * 1e6;
      result.kernel_mean_us = pair.kernel.mean_seconds() * 1e6;
      result.speedup = pair.speedup();
      state.counters["samples"] = pair.kernel.count();
      state.counters["reference_us"] = result.reference_us;
      state.counters["kernel_us"] = result.kernel_us;
      state.counters["speedup"] = result.speedup;
      state.counters["iqr_pct"] = pair.kernel.iqr_percent();
      state.counters["reference_iqr_pct"] = pair.reference.iqr_percent();
      add_roofline_counters(state, *op, inputs, expected, pair.kernel.median_seconds(), timer.launch_overhead_seconds(), device);
      if (result.speedup > kSpeedupReviewThreshold) state.counters["speedup_review"] = 1;
      if (device.is_cuda()) {
        const double hidden = timer.hidden_work_seconds(fresh, reference, candidate);
        state.counters["hidden_work_us"] = hidden * 1e6;
        if (hidden > 0) state.counters["hidden_work"] = 1;
      }
    }
  } catch (const std::exception& error) {
    results().push_back(result);
    return skip(state, error.what());
  }
  for (auto _ : state) {
  }
  results().push_back(result);
  state.SetLabel(device.str());
}

void register_benchmarks(bool calibration) {
  for (const OperatorSpec* op : registered_operators()) {
    for (size_t c = 0; c < op->case_count; ++c) {
      const CaseSpec* spec = &op->cases[c];
      const naming::OperatorName name = *naming::OperatorName::from_user(op->display);
      auto add = [&](const std::string& backend_name, const VariantSpec* variant, Backend backend) {
        const std::string benchmark = naming::benchmark_name(op->suite, name, spec->name, backend_name);
        benchmark::RegisterBenchmark(benchmark.c_str(), run_benchmark, op, spec, variant, backend, backend_name)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMicrosecond);
      };
      add("aten", nullptr, Backend::kAten);
      for (size_t v = 0; v < op->variant_count; ++v) add(op->variants[v].name, &op->variants[v], Backend::kKernel);
      if (calibration) {
        add("aten_self", nullptr, Backend::kAtenSelf);
        add("aten_twice", nullptr, Backend::kAtenTwice);
      }
    }
  }
}

// Removes --<name>[=value] from argv; returns the value ("" for a bare flag), or nullopt.
std::optional<std::string> take_flag(int& argc, char** argv, const std::string& name) {
  std::optional<std::string> value;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--" + name) {
      value = "";
    } else if (argument.rfind("--" + name + "=", 0) == 0) {
      value = argument.substr(name.size() + 3);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return value;
}

}  // namespace
}  // namespace backendbench

int main(int argc, char** argv) {
  using namespace backendbench;
  const bool calibration = take_flag(argc, argv, "backendbench_calibration").has_value();
  const std::string summary_path = take_flag(argc, argv, "backendbench_summary").value_or("");
  try {
    (void)SamplingLayout::from_environment();  // a bad setting stops the run before any sample
  } catch (const std::invalid_argument& error) {
    std::cerr << error.what() << "\n";
    return 2;
  }
  register_benchmarks(calibration);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const Summary summary = summarize(results());
  std::cerr << summary.text();
  if (!summary_path.empty()) {
    std::ofstream(summary_path) << summary.json();
    std::cerr << "summary written to " << summary_path << "\n";
  }
  return 0;
}
