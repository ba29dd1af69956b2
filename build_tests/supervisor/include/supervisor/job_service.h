// A supervisor that runs one job after another, kept between them (a test executable or ./bench
// started with --backendbench_serve=<kernel root>): what the llm backends' candidate checks and
// timings use, so that a candidate's check or timing costs its cases, not the start of libtorch and
// CUDA in two processes. In the shape of Bazel's persistent workers (aesthetics.md §5): one request
// per line of JSON on standard input, one response per line on the original standard output.
//
//   request   {"schema": "backendbench-job-request", "version": 1, "job": <a job's JSON, or the
//              path of a JSON Lines file of jobs>, "verdicts": <path>, "kernel_manifest": <path>,
//              "log": <path>}
//   response  {"schema": "backendbench-job-response", "version": 1, "verdicts": <how many were
//              written>} or {..., "error": <why the job did not run>}
//
// Each request is what one run of the executable with --backendbench_job, --backendbench_verdicts
// and --backendbench_kernel_manifest does: check jobs in a test executable, time jobs in ./bench
// (its timing settings; one request at a time, so two timings of one server never share the GPU).
// What this process and its kernel workers print while it runs goes to the request's log. Its
// kernels run in a worker of their own (kernel_workers.h), sandboxed as ever; between requests a spare
// worker that sees the kernel root read-only starts libtorch (and CUDA) for the next one, so a
// manifest under the root loads into a worker that is already running. No kernel code ever runs in
// this process, and no worker serves two requests.
#pragma once

#include <string>

#include "backendbench/settings.h"
#include "language/job.h"

namespace backendbench {

// Answers requests read from `in_fd` on `out_fd` until `in_fd` closes; returns the exit status.
// `settings`: the process's (Settings::serve_root is the kernel root). `mode`: the jobs it runs
// (kCheck: a test executable; kTime: ./bench); a request of the other mode gets an error.
int serve_jobs(const Settings& settings, int in_fd, int out_fd, Job::Mode mode = Job::Mode::kCheck);

// Served CTest entries (`backendbench run`, backendbench-entry): the same requests, each on a
// connection to the abstract Unix socket Settings::listen_address, one connection at a time: a
// client that connects while another's request is taken gets {..., "busy": true} and tries the
// next server. A request may leave out "kernel_manifest" (`default_manifest`, the executable's
// own) and may set "case_timeout" (seconds); the response also counts "passed", "failed" and
// "skipped" and gives the cases' time ("cases_ms"); the request's log gets one line per case. Writes {..., "listening": <address>}
// on `out_fd` once it listens; ends when `control_fd` reaches its end (the planner stopped it, or
// died). With Settings::serve_root, a spare worker waits for each request's kernels; without it,
// a request of kernels starts its workers. A case that runs past twice the case timeout and 10 s
// (a hanging reference) ends the process; its client's entry fails with the request's log.
// Reachable only from this network namespace: a sandboxed worker has its own.
int serve_entries(const Settings& settings, const std::string& default_manifest, int control_fd, int out_fd);

}  // namespace backendbench
