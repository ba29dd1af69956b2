// Running a job in the supervisor; see run_job.h.
#include "supervisor/run_job.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

#include "supervisor/run_case.h"
#include "backendbench/timing.h"

namespace backendbench {
namespace {

const OperatorSpec* find_operator(const std::string& suite, const std::string& display) {
  for (const OperatorSpec* op : registered_operators()) {
    if (op->suite == suite && op->display == display) return op;
  }
  return nullptr;
}

// The timer of a device, made on first use (its launch overhead is measured once per device);
// nullptr where the device cannot time (CUDA without a GPU).
Timer* timer_for(c10::Device device, const Settings& settings) {
  // Never destroyed: at exit CUDA's runtime is unloaded before function-local statics, and a
  // Timer's CUDA events would then throw from their destructors.
  static auto* timers = new std::map<std::string, std::unique_ptr<Timer>>;
  std::unique_ptr<Timer>& timer = (*timers)[device.str()];
  if (!timer && !(device.is_cuda() && !cuda_available())) {
    timer = std::make_unique<Timer>(device, settings.stopping, settings.layout);
  }
  return timer.get();
}

Verdict failed(const ResolvedJob& resolved, size_t index, const std::string& why) {
  Verdict verdict = job_verdicts(resolved.job, {resolved.case_names.at(index)}, {}, why).front();
  verdict.salt = resolved.settings.salt;
  return verdict;
}

}  // namespace

Settings settings_for(const Job& job, Settings settings) {
  if (job.salt) {
    settings.salt = *job.salt;
    settings.salt_given = true;
  }
  if (job.draws) settings.draws = *job.draws;
  if (job.case_timeout_seconds) settings.case_timeout_seconds = *job.case_timeout_seconds;
  if (job.device) settings.device = c10::Device(*job.device);
  return settings;
}

std::string device_mismatch_warning(const Backend& backend, const Settings& settings) {
  if (!settings.device || !settings.device->is_cuda() || backend.kind() != Backend::Kind::kKernel) return "";
  const c10::Device runs_on = backend.device(settings);
  if (!runs_on.is_cpu()) return "";
  return "backendbench: warning: " + backend.name() + " (" + backend.source() + ") runs on the CPU, though the run asks for " +
         settings.device->str() + ": a C++ kernel of a .cpp file is a CPU kernel whatever the run's device (a .cu file, or "
         "a Python kernel, runs on CUDA); its figures are the CPU's";
}

std::vector<ResolvedJob> resolve_jobs(const std::vector<Job>& jobs, const Settings& settings, bool with_calibration) {
  static auto* warned = new std::set<std::string>;  // once a kernel a process
  std::vector<ResolvedJob> resolved;
  for (const Job& job : jobs) {
    ResolvedJob r;
    r.job = job;
    r.settings = settings_for(job, settings);
    r.op = find_operator(job.suite, job.op);
    if (r.op == nullptr) {
      r.problem = "this executable has no operator " + job.op + " in suite " + job.suite;
    } else {
      for (const Backend* backend : backends().for_operator(r.op->display, with_calibration)) {
        if (backend->name() == job.backend) r.backend = backend;
      }
      if (r.backend != nullptr) {
        const std::string warning = device_mismatch_warning(*r.backend, r.settings);
        if (!warning.empty() && warned->insert(r.backend->name() + "\n" + r.backend->source()).second) {
          std::cerr << warning << std::endl;
        }
      }
      if (r.backend == nullptr) {
        r.problem = "no backend " + job.backend + " for " + job.op +
                    " (a kernel whose worker did not list it: its library did not register it, or lied)";
      }
    }
    if (!job.cases.empty()) {
      r.case_names = job.cases;
    } else if (r.op != nullptr) {
      for (size_t c = 0; c < r.op->case_count; ++c) r.case_names.push_back(r.op->cases[c].name);
    } else {
      r.case_names = {"(every case)"};
    }
    if (job.parts > 1 && (!job.cases.empty() || r.op != nullptr)) {
      std::vector<std::string> in_part;
      for (size_t position = 0; position < r.case_names.size(); ++position) {
        if (job.in_part(position)) in_part.push_back(std::move(r.case_names[position]));
      }
      r.case_names = std::move(in_part);
    }
    // By name through a map: an operator may have thousands of cases (convolution_backward: 1,898).
    std::unordered_map<std::string_view, const CaseSpec*> by_name;
    for (size_t c = 0; r.op != nullptr && c < r.op->case_count; ++c) {
      by_name.insert_or_assign(r.op->cases[c].name, &r.op->cases[c]);
    }
    for (const std::string& name : r.case_names) {
      const auto found = by_name.find(name);
      r.cases.push_back(found == by_name.end() ? nullptr : found->second);
    }
    resolved.push_back(std::move(r));
  }
  return resolved;
}

bool needs_no_kernel_worker(const std::vector<Job>& jobs) {
  return !jobs.empty() && std::all_of(jobs.begin(), jobs.end(), [](const Job& job) {
    const Backend* backend = backends().find(job.op, job.backend);
    return backend != nullptr && backend->kind() != Backend::Kind::kKernel;
  });
}

std::vector<Job> every_job(Job::Mode mode, bool with_calibration) {
  std::vector<Job> jobs;
  for (const OperatorSpec* op : registered_operators()) {
    for (const Backend* backend : backends().for_operator(op->display, with_calibration)) {
      Job job;
      job.suite = op->suite;
      job.op = op->display;
      job.backend = backend->name();
      job.mode = mode;
      jobs.push_back(job);
    }
  }
  return jobs;
}

namespace {

Verdict run_job_case_untimed(const ResolvedJob& job, size_t index) {
  if (!job.problem.empty()) return failed(job, index, job.problem);
  const CaseSpec* spec = job.cases.at(index);
  if (spec == nullptr) {
    return failed(job, index, job.job.op + " has no case " + job.case_names[index] + " in suite " + job.job.suite);
  }
  try {
    if (job.job.mode == Job::Mode::kTime) {
      if (Timer* timer = timer_for(job.backend->device(job.settings), job.settings)) {
        return time_case(*job.op, *spec, *job.backend, job.settings, *timer);
      }
      Verdict checked = check_case(*job.op, *spec, *job.backend, job.settings);
      checked.frontend = "bench";
      return checked;
    }
    return check_case(*job.op, *spec, *job.backend, job.settings);
  } catch (const std::exception& error) {
    return failed(job, index, error.what());
  }
}

}  // namespace

Verdict run_job_case(const ResolvedJob& job, size_t index) {
  const auto started = std::chrono::steady_clock::now();
  Verdict verdict = run_job_case_untimed(job, index);
  verdict.case_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  return verdict;
}

}  // namespace backendbench
