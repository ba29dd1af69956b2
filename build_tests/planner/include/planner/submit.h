// Submitting a phase: the run's entries as a CTest folder of its own, run here by ctest or as
// Slurm array tasks, with progress from the verdict files they write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/process.h"
#include "planner/run_plan.h"

namespace backendbench::planner {

using Clock = std::chrono::steady_clock;

// The cores this process may run on (a scheduler's cgroup or affinity, not the machine's).
int cores_here();
// Intra-op threads for each of `at_once` entries sharing `cores`.
int threads_per_entry(int cores, int at_once);
// The GPUs this process can hand out (gpu_slot.h).
int gpus_here();

// What the run hands out: `gpus` GPUs (gpu_slot.h: gpus_to_allocate) of `slots` correctness
// entries each. With none, the entries declare no GPU and ctest gets no resource spec.
struct GpuPlan {
  int gpus = 0, slots = 1;
  std::string spec_path;  // the resource spec the run wrote; "" with no GPU
};

// One entry of a CTest folder of the run's own.
struct FolderEntry {
  std::string name;
  std::vector<std::string> command;
  std::string labels;
  size_t cost = 0;     // CTest starts the costliest first
  int gpu_slots = 0;   // slots of one GPU it takes (RESOURCE_GROUPS gpus:<n>); 0: none
  bool alone = false;  // RUN_SERIAL: beside no other entry (timing on the CPU)
  bool runs_kernels = false;  // a job of a kernel or an op library (not the reference's)
};

// A verdict file a phase's entry writes, and the entries (Entry::key) whose verdicts it holds.
struct PhaseFile {
  std::string path;
  std::vector<std::string> entries;
};

// A CTest folder of the run's own (CTestTestfile.cmake), named and labelled as the build's
// entries. `ctest --test-dir` runs it with the user's CTest (-j, --output-junit, the resource
// spec), and nothing selects entries by name.
void write_ctest_folder(const std::string& folder, const std::vector<FolderEntry>& entries, const std::string& timeout);

// How a phase's CTest folder runs: here, with ctest; or with --slurm as Slurm array tasks, task k
// running entries k+1, k+1+tasks, ... (ctest -I) on the GPUs Slurm gave it, its resource spec
// written by `backendbench gpus` where it runs. `sbatch --wait` returns when every task has
// ended; the verdict files (on the shared file system) are then read as a local run's.
// `junit`: where ctest writes JUnit ("" none); Slurm's tasks write <folder>/junit.<k>.xml.
std::vector<std::string> phase_command(const RunPlan& request, const std::string& folder, const std::string& phase,
                                       int jobs, const GpuPlan& gpus, const std::string& junit,
                                       const std::vector<std::string>& ctest_arguments);

// After a Slurm phase: its tasks' logs appended to the phase's log, their JUnit files joined into
// one (<testsuites> of each task's <testsuite>) at `junit` when it is not "".
void gather_slurm_outputs(const RunPlan& request, const std::string& folder, const std::string& log,
                          const std::string& junit);

// Runs one phase (ctest or ./bench), printing progress from the verdict files it appends to.
// `start`: when the phase began (its supervisors' start included, for the correctness phase).
int run_phase(const std::string& phase, const std::vector<std::string>& argv, const ProcessOptions& options,
              const std::vector<PhaseFile>& verdict_files, int64_t total, Clock::time_point start = Clock::now());

}  // namespace backendbench::planner
