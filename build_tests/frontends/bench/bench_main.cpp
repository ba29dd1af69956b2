// ./bench: one Google Benchmark per (suite, operator, case, backend), named
// <suite>/<operator>/<case>/<backend> so that --benchmark_filter regexes select them.
//
// Each benchmark runs exactly one Google Benchmark iteration (Iterations(1), manual time) in
// which time_case (run_case.h) checks the case with the same checks as the tests and then takes
// its own samples (timing.h). This file only turns each verdict into Google Benchmark's
// counters and collects the verdicts for the summary (scores.h): per (operator, backend) and
// overall geomean speedup, and perf@p, printed and written as JSON (--backendbench_summary).
//
// Isolation: ./bench supervises. It runs the benchmarks in a worker process (itself, with
// --backendbench_worker), which writes each benchmark's case as a job of that one case (job.h)
// before running it, and exits at once after a CUDA fault (the context is lost for every later
// benchmark). When a worker dies (a signal) or faults, the case it was running has no verdict:
// the supervisor gives it the one rule's failure (job_verdicts.h) with the cause, and starts a
// new worker that leaves out every case already run. The summary covers every benchmark; the exit
// status is 1 when any kernel crashed or faulted.
//
// With --backendbench_serve it serves time jobs instead (job_service.h): what the llm backends'
// timings use, one candidate after another, without starting libtorch and CUDA for each.
//
// Calibration backends (--backendbench_calibration): `aten_self` measures the aten operator as
// both reference and kernel (two independent measurements), `aten_twice` a kernel that runs the
// aten operator twice; they test the instrument itself (scripts/timing_targets.py).
#include <benchmark/benchmark.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>

#include "backendbench/backend.h"
#include "backendbench/files.h"
#include "supervisor/job_service.h"
#include "backendbench/job_verdicts.h"
#include "backendbench/observe.h"
#include "supervisor/run_job.h"
#include "supervisor/run_start.h"
#include "planner/scores.h"
#include "backendbench/settings.h"
#include "backendbench/timing.h"
#include "language/naming.h"

namespace backendbench {

extern const char* const kKernelManifest;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
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
    state.counters["speedup_low"] = t.speedup_low;
    state.counters["speedup_high"] = t.speedup_high;
    if (t.other_load >= 0) state.counters["other_load"] = t.other_load;
    if (t.cpu_waited >= 0) state.counters["cpu_waited"] = t.cpu_waited;
    if (t.back_to_back_speedup >= 0) state.counters["back_to_back_speedup"] = t.back_to_back_speedup;
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

constexpr int kCudaFaultExitCode = 3;

// A benchmark's case as the progress and skip files name it: the job of that one case (job.h).
std::string case_job_line(const ResolvedJob& job, size_t index) { return job_json(job.job.only(job.case_names[index])); }

void run_benchmark(benchmark::State& state, const ResolvedJob* job, size_t index, const Settings* settings,
                   const std::string& name) {
  if (!settings->progress_path.empty()) std::ofstream(settings->progress_path, std::ios::app) << case_job_line(*job, index) << std::endl;
  const c10::Device device = job->backend != nullptr ? job->backend->device(job->settings) : c10::Device(c10::kCPU);
  Verdict verdict = run_job_case(*job, index);
  verdict.frontend = "bench";
  // A CUDA fault (an illegal address, say) is sticky: the context is lost for everything after.
  // The worker reports this case with the cause and stops; its supervisor starts another.
  std::string fault;
  if (device.is_cuda() && cuda_available()) {
    try {
      synchronize_all_devices();
    } catch (const std::exception& error) {
      fault = error.what();
    }
  }
  if (!fault.empty()) {
    verdict.status = Verdict::Status::kFailed;
    verdict.errors.push_back("CUDA fault while running " + name + ": " + fault.substr(0, fault.find('\n')));
  }
  if (!settings->verdicts_path.empty()) append_verdict(settings->verdicts_path, verdict);
  if (!fault.empty() && settings->worker) {
    std::cerr << "\n[  FAULT   ] " << verdict.errors.back() << "\n";
    std::_Exit(kCudaFaultExitCode);
  }
  if (verdict.timing) {
    state.SetIterationTime(verdict.timing->kernel_us / 1e6);
    set_counters(state, *verdict.timing, job->backend->kind() == Backend::Kind::kReference, device.is_cuda());
  }
  for (const std::string& flag : verdict.flags) state.counters[flag] = 1;
  if (verdict.time_spent && verdict.timing) {
    // Where the case's wall time went (the checks, the measurement, the bound within it): what
    // a kernel worker costs over timing in this process, case by case.
    state.counters["checks_ms"] = verdict.time_spent->checks_ms;
    state.counters["measurement_ms"] = verdict.time_spent->measurement_ms;
    if (job->backend->runs_in_worker()) state.counters["bound_ms"] = verdict.time_spent->bound_ms;
  }
  if (verdict.status == Verdict::Status::kSkipped) {
    state.SkipWithError(verdict.skip_reason.c_str());
  } else if (!verdict.passed()) {
    state.SkipWithError(("failed: " + verdict.errors.front()).c_str());
  }
  for (auto _ : state) {
  }
  state.SetLabel(device.str());
}

// One benchmark per case of each job; without jobs, every backend of every operator, the
// backends of one case next to each other.
void register_benchmarks(const Settings& settings) {
  const std::vector<std::string> skip_list = settings.skip_path.empty() ? std::vector<std::string>() : lines_of(settings.skip_path);
  const std::set<std::string> skipped(skip_list.begin(), skip_list.end());
  std::vector<Job> jobs = settings.jobs.empty() ? every_job(Job::Mode::kTime, settings.calibration) : settings.jobs;
  for (Job& job : jobs) job.mode = Job::Mode::kTime;  // ./bench times what it runs
  // Benchmarks hold pointers into it until the process ends.
  static const auto* resolved = new std::vector<ResolvedJob>(resolve_jobs(jobs, settings, settings.calibration));
  const auto register_one = [&](const ResolvedJob& job, size_t c) {
    const std::optional<naming::OperatorName> op = naming::OperatorName::from_user(job.job.op);
    const std::string benchmark = op ? naming::benchmark_name(job.job.suite, *op, job.case_names[c], job.job.backend)
                                     : job.job.suite + "/" + job.job.op + "/" + job.case_names[c] + "/" + job.job.backend;
    if (skipped.count(case_job_line(job, c))) return;
    benchmark::RegisterBenchmark(benchmark.c_str(), run_benchmark, &job, c, &settings, benchmark)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  };
  // Jobs of one operator with the same cases (every backend of it, as every_job lists them) are
  // registered case by case.
  for (size_t first = 0; first < resolved->size();) {
    size_t last = first + 1;
    while (last < resolved->size() && (*resolved)[last].job.suite == (*resolved)[first].job.suite &&
           (*resolved)[last].job.op == (*resolved)[first].job.op &&
           (*resolved)[last].case_names == (*resolved)[first].case_names) {
      ++last;
    }
    for (size_t c = 0; c < (*resolved)[first].case_names.size(); ++c) {
      for (size_t j = first; j < last; ++j) register_one((*resolved)[j], c);
    }
    first = last;
  }
}

// Runs this executable with `arguments`; returns its wait status.
int run_worker(const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    execv("/proc/self/exe", argv.data());
    std::perror("./bench: cannot start a worker");
    std::_Exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// The supervisor: workers until every selected benchmark has run; then the summary.
int supervise(const Settings& settings, const std::vector<std::string>& arguments) {
  const std::string scratch = files::temporary_directory() + "/backendbench_bench_" + std::to_string(getpid());
  files::make_directories(scratch);
  const std::string verdicts_path = settings.verdicts_path.empty() ? scratch + "/verdicts.jsonl" : settings.verdicts_path;
  const std::string progress = scratch + "/progress.txt", skip = scratch + "/skip.txt";
  start_verdicts(verdicts_path);
  std::ofstream(skip, std::ios::trunc).flush();
  std::vector<std::string> worker_arguments = arguments;
  for (const std::string& flag : {std::string("--backendbench_worker"), "--backendbench_verdicts=" + verdicts_path,
                                  "--backendbench_progress=" + progress, "--backendbench_skip=" + skip,
                                  "--backendbench_salt=" + salt_text(settings.salt)}) {
    worker_arguments.push_back(flag);
  }
  int faults = 0;
  for (;;) {
    std::ofstream(progress, std::ios::trunc).flush();
    const int status = run_worker(worker_arguments);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
    const std::vector<std::string> started = lines_of(progress);
    if (started.empty() || (WIFEXITED(status) && WEXITSTATUS(status) != kCudaFaultExitCode)) {
      // Not a kernel: a bad flag, a missing library. The worker said why.
      files::remove_tree(scratch);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    ++faults;
    if (WIFSIGNALED(status)) {
      // The worker died in its last started case; where that case has no verdict, the one rule
      // (job_verdicts.h) fails it, with the cause. Where it has one, the worker died after it,
      // between cases, and no case is lost.
      Job culprit = parse_jobs(started.back(), progress).front();
      if (!culprit.salt) culprit.salt = settings.salt;
      const SignalText signal = signal_text(WTERMSIG(status));
      const std::string cause = std::string("the process received ") + signal.prefix + signal.name + " (" +
                                signal.description + ")";
      const std::vector<Verdict> written = read_verdicts(verdicts_path).verdicts;
      const bool answered = std::any_of(written.begin(), written.end(), [&](const Verdict& verdict) {
        return verdict.suite == culprit.suite && verdict.op == culprit.op && verdict.backend == culprit.backend &&
               verdict.case_name == culprit.cases.front();
      });
      if (!answered) {
        for (const Verdict& verdict : job_verdicts(culprit, culprit.cases, {}, "crashed: " + cause)) append_verdict(verdicts_path, verdict);
      }
      std::cerr << "\n[  CRASHED ] " << culprit.name() << " case " << culprit.cases.front() << (answered ? " (after its verdict)" : "")
                << ": " << cause << "\n";
    }
    std::ofstream skipped(skip, std::ios::app);
    for (const std::string& line : started) skipped << line << "\n";
  }
  const Summary summary = summarize(read_verdicts(verdicts_path).verdicts);
  std::cerr << summary.text();
  if (!settings.summary_path.empty()) {
    std::ofstream(settings.summary_path) << summary.json();
    std::cerr << "summary written to " << settings.summary_path << "\n";
  }
  if (faults > 0) std::cerr << faults << " benchmark(s) crashed or faulted; every other benchmark ran\n";
  files::remove_tree(scratch);
  return faults > 0 ? 1 : 0;
}

}  // namespace
}  // namespace backendbench

int main(int argc, char** argv) {
  using namespace backendbench;
  const std::vector<std::string> arguments(argv, argv + argc);  // a worker gets them all again
  const bool listing = std::any_of(arguments.begin(), arguments.end(), [](const std::string& argument) {
    return argument.rfind("--benchmark_list_tests", 0) == 0 || argument == "--help";
  });
  static const std::optional<Settings> started = start_run(Frontend::kBench, argc, argv, nullptr, std::cerr);
  if (!started) return 2;
  const Settings& settings = *started;
  if (settings.serves()) {
    // Time jobs served one request after another (job_service.h; the llm backends' timings): no
    // benchmark runs, and no process of ./bench's own between this one and the kernel workers,
    // since no kernel code runs here. The responses get the original standard output; what
    // anything prints goes to stderr.
    const int protocol_out = dup(STDOUT_FILENO);
    if (protocol_out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 2;
    return serve_jobs(settings, STDIN_FILENO, protocol_out, Job::Mode::kTime);
  }
  // Only a process that runs benchmarks starts the kernel workers and registers them: a
  // supervisor's worker process does both again (in the supervisor they cost a kernel worker's
  // start, 0.25 s of a 1.5 s timing phase on the 2-core machine).
  if (settings.worker || listing) {
    try {
      start_kernel_workers_for(settings, kKernelManifest);
    } catch (const std::exception& error) {
      std::cerr << error.what() << "\n";
      return 2;
    }
    register_benchmarks(settings);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!settings.worker && !listing) return supervise(settings, arguments);
  // A worker, or a listing: the supervisor alone writes the summary.
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
