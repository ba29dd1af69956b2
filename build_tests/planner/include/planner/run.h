// A run of `backendbench run` as the planner's named phases, carried from one to the next in a
// Run (like lit's main()): the command calls them in order (cli/commands.cpp: run_command).
// Plan: what the run is, the kernel folder's problems left out, the build folder configured, the
// GPUs and processes. Build: the served supervisors started beside it, the build. Submit and
// collect: the entries planned, correctness, timing. Report: run.json, the results folder, the
// scores.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backendbench/verdict.h"
#include "model/model.h"
#include "planner/build_tree.h"
#include "planner/entry_servers.h"
#include "planner/installation.h"
#include "planner/interruption.h"
#include "planner/jobs.h"
#include "planner/process.h"
#include "planner/results.h"
#include "planner/run_plan.h"
#include "planner/submit.h"
#include "planner/tree_selection.h"

namespace backendbench::planner {

struct Run {
  Run(const RunPlan& given, const std::string& command);

  RunPlan request;
  const std::string command_line;
  const Installation where;
  StagingFolder staging;
  const BuildTree tree;
  const std::string logs, kernel_view, started;
  const Clock::time_point start;
  std::vector<std::string> suite_names, backend_labels;
  uint64_t salt = 0;
  TreeSelection selection;
  // The kernel folder's problems and the kernels that did not compile: left out, their cases fail.
  std::vector<model::KernelProblem> problems;
  std::map<std::string, std::string> broken;
  GpuPlan gpus;
  ProcessOptions environment, ctest_options;
  // The supervisors kept for the correctness phase (entry_servers.h), and what starts them.
  bool served = false;
  int servers_at_once = 1;
  std::vector<std::string> gpu_files;
  std::string bubblewrap;
  std::optional<EntryServers> servers;
  // The entries the run's processes judge, and those whose verdicts this process makes.
  std::vector<Entry> entries, unbuilt;
  std::string runs_on, timeout;
  std::vector<Verdict> verdicts;
  nlohmann::json phase_seconds = nlohmann::json::object();
  // The phase in progress (correctness, timing), which an interruption names.
  std::string phase;
};

// What the run is, said before anything runs; its salt and the environment every process of the
// run reads its policy from.
void announce_run(Run& run);
// The kernel folder's problems, before any build: each is said once here, fails its own
// kernel's cases, and is left out of what the build reads (a view of the folder without it).
void leave_out_kernel_folder_problems(Run& run);
// The build folder configured for the run's selection (build_steps.h).
void configure_run_tree(Run& run);
// The GPUs CTest hands out, and each process's environment.
void plan_gpus_and_processes(Run& run);
// The supervisors kept for the correctness phase, started beside the build where they exist.
void start_servers_before_the_build(Run& run);
// The suites' test executables (and ./bench where the run times). False when the build fails
// and no kernel is to blame, which ends the run (said on stderr).
bool build_targets(Run& run);
// The entries the run's processes judge, and those whose verdicts this process makes.
void plan_entries(Run& run);
// Correctness: CTest runs the run's entries; the verdicts collected (a case without one fails).
// Under an InterruptWatch a stop ends the phase, and its cases not judged yet are skipped.
void run_correctness_phase(Run& run);
// Timing: ./bench on each entry of the timed suites, run by CTest too. Not run once the run
// is interrupted.
void run_timing_phase(Run& run);
// run.json: what was run, where, with what, how long each phase took, and the scores.
nlohmann::json run_json(const Run& run);
// The results folder, written whole in the staging folder and moved into place: the verdicts,
// BackendBench's files, `described` as run.json, the report and the logs.
void write_results(Run& run, const nlohmann::json& described);
// The scores and where the results are; the exit status: 1 when a case failed or the kernel
// folder had a problem, 130 when the run was interrupted (what it judged first is written).
int report_run(const Run& run, const nlohmann::json& described);

}  // namespace backendbench::planner
