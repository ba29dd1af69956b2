// ./bench: one Google Benchmark per (suite, operator, case, backend), named
// <suite>/<operator>/<case>/<backend> so that --benchmark_filter regexes select them.
//
// Each benchmark runs exactly one Google Benchmark iteration (Iterations(1), manual time) in
// which time_case (run_case.h) checks the case with the same checks as the tests and then takes
// its own samples (timing.h). This file only turns each verdict into Google Benchmark's
// counters and collects the verdicts for the summary (scores.h): per (operator, backend) and
// overall geomean speedup, and perf@p, printed and written as JSON (--backendbench_summary).
//
// Calibration backends (--backendbench_calibration): `aten_self` measures the aten operator as
// both reference and kernel (two independent measurements), `aten_twice` a kernel that runs the
// aten operator twice; they test the instrument itself (scripts/timing_targets.py).
#include <benchmark/benchmark.h>

#include <cstring>
#include <fstream>
#include <iostream>

#include "backendbench/backend.h"
#include "backendbench/run_case.h"
#include "backendbench/run_start.h"
#include "backendbench/scores.h"
#include "backendbench/settings.h"
#include "backendbench/timing.h"
#include "language/naming.h"

namespace backendbench {

extern const char* const kKernelManifest;

namespace {

std::vector<Verdict>& verdicts() {
  static std::vector<Verdict> all;
  return all;
}

void set_counters(benchmark::State& state, const TimingFigures& t, bool alone, bool cuda) {
  state.counters["samples"] = t.samples;
  state.counters["iqr_pct"] = t.iqr_pct;
  if (alone) {
    state.counters["median_us"] = t.kernel_us;
    state.counters["mean_us"] = t.kernel_mean_us;
  } else {
    state.counters["reference_us"] = t.reference_us;
    state.counters["kernel_us"] = t.kernel_us;
    state.counters["speedup"] = t.speedup;
    state.counters["reference_iqr_pct"] = t.reference_iqr_pct;
    if (cuda) state.counters["hidden_work_us"] = t.hidden_work_us;
  }
  state.counters["bytes"] = t.bytes;
  state.counters["flops"] = t.flops;
  state.counters["GBps"] = t.gbps;
  state.counters["TFLOPps"] = t.tflops;
  if (t.pct_peak_bw > 0) state.counters["pct_peak_bw"] = t.pct_peak_bw;
  if (t.pct_peak_flops > 0) state.counters["pct_peak_flops"] = t.pct_peak_flops;
  if (t.launch_overhead_us > 0) state.counters["launch_overhead_us"] = t.launch_overhead_us;
}

void run_benchmark(benchmark::State& state, const OperatorSpec* op, const CaseSpec* spec, const Backend* backend,
                   const Settings* settings) {
  const c10::Device device = backend->device(*settings);
  static std::map<std::string, std::unique_ptr<Timer>> timers;  // per device: launch overhead measured once
  std::unique_ptr<Timer>& timer = timers[device.str()];
  Verdict verdict;
  try {
    if (!timer && !(device.is_cuda() && !cuda_available())) {
      timer = std::make_unique<Timer>(device, settings->stopping, settings->layout);
    }
    verdict = timer ? time_case(*op, *spec, *backend, *settings, *timer) : check_case(*op, *spec, *backend, *settings);
  } catch (const std::exception& error) {
    verdict.op = op->display;
    verdict.backend = backend->name();
    verdict.status = Verdict::Status::kFailed;
    verdict.errors.push_back(error.what());
  }
  verdict.frontend = "bench";
  verdicts().push_back(verdict);
  if (!settings->verdicts_path.empty()) append_verdict(settings->verdicts_path, verdict);
  if (verdict.timing) {
    state.SetIterationTime(verdict.timing->kernel_us / 1e6);
    set_counters(state, *verdict.timing, backend->kind() == Backend::Kind::kReference, device.is_cuda());
  }
  for (const std::string& flag : verdict.flags) state.counters[flag] = 1;
  if (verdict.status == Verdict::Status::kSkipped) {
    state.SkipWithError(verdict.skip_reason.c_str());
  } else if (!verdict.passed()) {
    state.SkipWithError(("failed: " + verdict.errors.front()).c_str());
  }
  for (auto _ : state) {
  }
  state.SetLabel(device.str());
}

void register_benchmarks(const Settings& settings) {
  for (const OperatorSpec* op : registered_operators()) {
    const naming::OperatorName name = *naming::OperatorName::from_user(op->display);
    for (size_t c = 0; c < op->case_count; ++c) {
      for (const Backend* backend : backends().for_operator(op->display, settings.calibration)) {
        const std::string benchmark = naming::benchmark_name(op->suite, name, op->cases[c].name, backend->name());
        benchmark::RegisterBenchmark(benchmark.c_str(), run_benchmark, op, &op->cases[c], backend, &settings)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace
}  // namespace backendbench

int main(int argc, char** argv) {
  using namespace backendbench;
  static const std::optional<Settings> started = start_run(Frontend::kBench, argc, argv, kKernelManifest, std::cerr);
  if (!started) return 2;
  const Settings& settings = *started;
  register_benchmarks(settings);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const Summary summary = summarize(verdicts());
  std::cerr << summary.text();
  if (!settings.summary_path.empty()) {
    std::ofstream(settings.summary_path) << summary.json();
    std::cerr << "summary written to " << settings.summary_path << "\n";
  }
  return 0;
}
