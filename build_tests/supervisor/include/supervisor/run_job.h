// Running a Job (language/job.h) in the supervisor: the one path from "these cases, this
// backend, this mode" to verdicts. Every front-end that runs cases asks here: the test
// executables register one test per case of each job and ./bench one benchmark, each calling
// run_job_case; what plans runs (`backendbench run`, the llm backends, the scripts) hands jobs to
// those executables (--backendbench_job) and reads their verdicts back through job_verdicts,
// the one place a case without a verdict becomes a failure. A kernel's code runs in a kernel
// worker (kernel_workers.h), which restarts after a crash, hang or CUDA fault, never in this process.
#pragma once

#include <string>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/cases.h"
#include "backendbench/settings.h"
#include "backendbench/verdict.h"
#include "backendbench/job_verdicts.h"
#include "language/job.h"

namespace backendbench {

// The process's settings with those the job fixes applied.
Settings settings_for(const Job& job, Settings settings);

// A job resolved against what this process has: the suites' case tables and the backends its
// kernel workers listed.
struct ResolvedJob {
  Job job;
  Settings settings;                    // settings_for(job, the process's)
  const OperatorSpec* op = nullptr;     // nullptr: the suite has no such operator
  const Backend* backend = nullptr;     // nullptr: no such backend for the operator
  std::vector<std::string> case_names;  // the job's cases, or every case of the operator
  std::vector<const CaseSpec*> cases;   // one per name; nullptr: the operator has no such case
  std::string problem;                  // why no case of the job can run; "" when they can
};

std::vector<ResolvedJob> resolve_jobs(const std::vector<Job>& jobs, const Settings& settings, bool with_calibration);
// What resolve_jobs says on standard error, once a kernel, where the run asks for CUDA
// (BACKENDBENCH_DEVICE, a job's device) and the kernel runs on the CPU: a C++ kernel of a .cpp
// file is a CPU kernel whatever the run's device, and its figures would otherwise be taken for
// the GPU's. "" where it runs where asked, or no device was asked for.
std::string device_mismatch_warning(const Backend& backend, const Settings& settings);

// Whether `jobs` (at least one) name only backends this process has from the start (aten, the
// calibration backends): they need no kernel worker, and start none (a worker starts libtorch
// and loads every kernel library).
bool needs_no_kernel_worker(const std::vector<Job>& jobs);

// What an executable runs when given no job: one job per (operator, backend) it has, every case,
// in registration order (the reference first).
std::vector<Job> every_job(Job::Mode mode, bool with_calibration);

// Case `index` of the job, checked (Mode::kCheck) or checked and timed (kTime, on the job's
// device; without a usable device only checked). Never throws: an exception, an operator,
// backend or case this process does not have, are a failed verdict with the reason.
Verdict run_job_case(const ResolvedJob& job, size_t index);

}  // namespace backendbench
