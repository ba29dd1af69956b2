// The one typed request between whoever plans a run and the supervisor that runs it: a Job is
// the cases of one operator in one suite (all of them, or those named), one backend, a mode
// (check or time) and the settings it fixes (salt, draws, case timeout, device). Its JSON form
// (schema "backendbench-job", version kJobSchemaVersion; documented in the README, "Jobs") is
// what the generated CTest entries, `backendbench run`, the llm backends' candidate checks and
// the scripts hand to the test executables and ./bench (--backendbench_job), in place of name
// filters; verdicts (verdict.h) are the response. A field is only ever added within a version.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "language/diagnostic.h"

namespace backendbench {

constexpr int kJobSchemaVersion = 1;

struct Job {
  enum class Mode { kCheck, kTime };

  std::string suite;               // smoke
  std::string op;                  // relu.default (the operator's display name)
  std::string backend;             // aten, impl1, a Python kernel's or an op library's name
  Mode mode = Mode::kCheck;        // kCheck: the test executables; kTime: ./bench
  std::vector<std::string> cases;  // case names, run in this order; empty: every case of the operator
  // Settings the job fixes; unset: the running process's own (settings.h).
  std::optional<uint64_t> salt;
  std::optional<int> draws;
  std::optional<int> case_timeout_seconds;
  std::optional<std::string> device;  // "cpu", "cuda", "cuda:1"
  // One part of the job's cases, so that an operator with thousands of cases is several CTest
  // entries: part `part` (1-based) of `parts` runs the cases at positions part, part + parts, ...
  // (1-based) of the job's cases, which spreads them evenly. 0: the whole job.
  int part = 0, parts = 0;

  // The same job restricted to one case (whole: not a part).
  Job only(const std::string& case_name) const;
  // "<suite>/<op>/<backend>", and "/part<k>of<n>" for a part: how messages name a job.
  std::string name() const;
  // Whether the case at `position` (0-based) of the job's cases is in this job's part.
  bool in_part(size_t position) const;
};

// How many parts a job of `case_count` cases is split into so that none holds more than
// `cases_per_part` (0 or less: never split). The generated CTest entries and `backendbench run`
// both split this way.
int job_parts(size_t case_count, int cases_per_part);

// A bad job: "<where>:<line>:<column>: error: <what>; expected <form>".
using JobError = DiagnosticError;

// One line of JSON, no newline.
std::string job_json(const Job& job);

// Jobs from JSON Lines (one job per line; empty lines ignored). `where` names the text in
// errors (a file, or the flag that carried it). Throws JobError on the first bad line.
std::vector<Job> parse_jobs(const std::string& text, const std::string& where);

// The value of --backendbench_job: a job's JSON itself (starts with '{'), or the path of a
// JSON Lines file of jobs. Throws JobError (an unreadable file included).
std::vector<Job> jobs_from_argument(const std::string& value);

// A supervisor serving jobs one after another (--backendbench_serve; the runtime's job_service.h
// documents the exchange): the schemas of its request and response lines.
inline constexpr const char* kJobRequestSchema = "backendbench-job-request";
inline constexpr const char* kJobResponseSchema = "backendbench-job-response";
inline constexpr int kJobServiceVersion = 1;

// Served CTest entries (`backendbench run`; README, "Jobs"): the supervisors a run keeps for its
// correctness phase listen on Linux abstract Unix sockets, which a sandboxed worker cannot reach
// (its own network namespace), each serving one entry at a time. The name of server `k` (from 0)
// of `executable` (its file name is used) for the GPU CTest gave as `gpu` ("cpu" where it gave
// none), under the run's `prefix`: the socket address without its leading zero byte.
std::string served_entry_address(const std::string& prefix, const std::string& executable, const std::string& gpu, int k);
// The most servers of one executable and GPU a client tries.
inline constexpr int kMostServedEntrySlots = 64;

// "0x0123456789abcdef": how a salt is written, in jobs, verdicts and on the console.
std::string salt_text(uint64_t salt);
// A salt as given: "0x" and hexadecimal digits, or decimal; nullopt when it is neither.
std::optional<uint64_t> parse_salt(const std::string& text);

}  // namespace backendbench
