// What a run of the planner is asked to do, once the command has checked its arguments
// (cli/run_request.h): the suites, the backends under test, the device, timing, the processes
// and where the results go. A generating backend's own choices stay with the command, which
// runs that phase (cli/generation_phase.h); the planner only knows that the kernel folder is
// written during the run.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace backendbench::planner {

// Correctness entries that run at once on one GPU when --gpu-slots is not given (docs/ctest.md,
// "Every GPU of a machine": measured on an H200).
inline constexpr int kDefaultGpuSlots = 4;

// Running the entries as Slurm array tasks (docs/ctest.md, "Many hosts, with Slurm").
struct SlurmChoice {
  int tasks = 4;                         // array tasks; task k runs entries k+1, k+1+tasks, ... of each phase
  int gpus_per_task = 0;                 // --gres=gpu:<n>; 0: none (a CPU run)
  std::vector<std::string> sbatch_arguments;  // the user's own (partition, account, time), before ours
};

struct SuiteChoice {
  std::string name;    // smoke, ..., or a file suite's name (naming::file_suite_name)
  std::string traces;  // a file suite's trace file or folder (absolute); "" for a built-in one
  bool timed_by_default = false;  // smoke, torchbench and trace files; not edge, opinfo or facto (no timing there in the original)
};

struct RunPlan {
  std::vector<SuiteChoice> suites;
  bool aten = false;                // the reference as the backend under test
  std::string kernels_directory;    // absolute; "" when only aten runs
  std::string kernels_label;        // "directory" or the kernel folder as typed
  std::vector<std::string> op_libraries;  // Python op libraries under test (cli's kOpLibraries)
  std::vector<std::string> ops;     // filters (naming::matches_filter); empty: all
  int topn = 0;
  std::string device;               // "", "cpu" or "cuda"
  std::set<std::string> timed_suites;  // --timing: all; --no-timing: none; else those timed by default
  double p = 1.0;
  int jobs = 1;
  int gpu_slots = kDefaultGpuSlots;  // correctness entries at once on one GPU (CTest's resource spec)
  std::optional<int> cases_per_entry;  // split larger jobs into parts (job.h); unset: the build's setting
  std::optional<SlurmChoice> slurm;    // the entries run as Slurm array tasks, not here
  std::string out;                  // absolute
  std::string build;                // absolute
  std::string torchbench_traces;    // absolute; "" when the torchbench suite is not selected
  uint64_t salt = 0;                // mixed into every input draw; random unless given
  bool salt_given = false;
  bool sandbox = true;              // kernel workers in bubblewrap; false only with --no-sandbox
  bool kernels_must_compute = false;  // --kernels-must-compute: the strict policy (settings.h)
  bool pack_small_jobs = true;      // small correctness jobs share an entry (entry_packs.h); false with --one-job-per-entry
  // Correctness entries served by supervisors kept across the phase (entry_servers.h); false
  // with --process-per-entry (each entry its own test executable).
  bool entry_servers = true;
  // A generating backend's: the kernel folder is written during the run, into the results folder
  // (<out>/kernels), by candidates built `candidate_slots` at a time (tree_selection.h).
  bool kernels_written_during_run = false;
  int candidate_slots = 0;
};

// The salt of a run: the one given (--salt), else a random one.
uint64_t run_salt(const RunPlan& plan);

}  // namespace backendbench::planner
