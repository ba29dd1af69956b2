// The backendbench command's subcommands as plain functions over the planner, the agents and the
// generator's model; main.cpp is only their command line. Each returns the exit status
// and throws CliError for bad input (printed by main as it is, status 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/run_request.h"
#include "planner/installation.h"

namespace backendbench::cli {

RunContext run_context(const Installation& installation);
bool operator_known(const std::string& filter);

// Exit status: 0 every selected case passed; 1 some failed (the results folder holds them all);
// 3 the build failed.
int run_command(const RunRequest& request, const std::string& command_line);

// `backendbench reward`: the reward API as a stream (agents/reward.h). Reads one candidate per
// line on standard input ({"id", "op", "language", "source"}) and writes one reward per line on
// standard output as each is ready; everything else goes to standard error. Exit status 0 at the
// end of the input, 2 bad arguments, 3 the build failed.
struct RewardArguments {
  std::string suite = "smoke,edge", device, build, traces, salt, topn, cases = "holdout", work;
  std::optional<bool> timing;
  int concurrency = 2;
  bool sandbox = true, keep_attempts = false;
};
int reward_command(const RewardArguments& arguments);

struct OpsRequest {
  std::string suite = "smoke", traces, kernels, build;
};
int ops_command(const OpsRequest& request);

int new_command(const std::string& op, bool cuda, const std::string& kernels_directory);

// Writes CTest's resource spec for the GPUs this process sees (gpu_slot.h: CUDA's, or those a
// scheduler named in CUDA_VISIBLE_DEVICES), `slots` entries each, to `out` ("" or "-": stdout),
// for `ctest --resource-spec-file`. Exit status 0.
int gpus_command(int slots, const std::string& out);

// Re-reads results folders (verdicts.jsonl, run.json), prints each one's scores, and writes the
// report again: one folder's into it (or `page`), several folders' as one page (`page`, default
// backendbench_report.html in the current folder), each run's backends tagged (run_tags).
int report_command(const std::vector<std::string>& directories, const std::string& page);

// Prints the comparison and writes it as HTML to `html` (""; B/compare.html). Exit status 1 when
// `fail_on_regression` and B regressed against A.
int compare_command(const std::string& before, const std::string& after, double threshold, bool fail_on_regression,
                    const std::string& html = "");

}  // namespace backendbench::cli
