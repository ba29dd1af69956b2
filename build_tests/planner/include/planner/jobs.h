// The run's entries, planned from the suites' manifests: one per (suite, operator, backend) the
// run selected, cut into parts and packed into the correctness phase's CTest entries; the
// kernels the run leaves out (a folder problem, no compile), whose cases fail without running;
// and the verdicts collected back, where a case without one fails (job_verdicts.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backendbench/verdict.h"
#include "language/job.h"
#include "model/model.h"
#include "planner/build_tree.h"
#include "planner/entry_costs.h"
#include "planner/run_plan.h"
#include "planner/submit.h"

namespace backendbench::planner {

// One (suite, operator, backend) the run selected: one CTest entry, or one per part of its cases
// (job.h) when it has more than the build's BACKENDBENCH_CASES_PER_ENTRY; their verdicts are
// read back together, so the parts are one row everywhere.
struct Entry {
  std::string suite, op, backend, kernel_file;
  std::vector<SuiteManifest::Case> cases;
  std::string failure;  // set for a kernel that did not compile: every case fails with it, nothing runs
  std::string skip_reason;  // set for a kernel that cannot run here (CUDA, no GPU): every case skipped, nothing runs
  int parts = 0;        // 0: one entry
  std::vector<std::string> ctest_names, verdicts_paths;
  SuiteManifest::Backend backend_facts;

  // The entry as a file's lines name it: its suite, operator and backend.
  std::string key() const { return suite + "|" + op + "|" + backend; }
  // Part `k` (1-based; 0 when not split) of the entry as a job.
  int part(size_t k) const { return parts ? static_cast<int>(k) + 1 : 0; }
  size_t part_cases(size_t k) const { return cases_in_part(part(k), parts); }
  // The cases of part `part` (0: all) when the entry is cut into `of` parts (job.h: Job::in_part).
  size_t cases_in_part(int part, int of) const {
    Job job;
    job.part = part, job.parts = of;
    size_t count = 0;
    for (size_t position = 0; position < cases.size(); ++position) count += job.in_part(position);
    return count;
  }
};

// The most cases in one CTest entry: --cases-per-entry, else the build's BACKENDBENCH_CASES_PER_ENTRY.
int cases_per_entry(const BuildTree& tree, const RunPlan& request);

// The entries the request selects from the suites' manifests. Throws DiagnosticError when an
// operator filter selects nothing, or (unless some kernels were left out) no entry is selected.
std::vector<Entry> selected_entries(const BuildTree& tree, const RunPlan& request, bool some_kernels_broken);

// Operators in `ops` that select nothing in any of the suites' operator lists (display names).
std::vector<std::string> unmatched_filters(const std::vector<std::string>& ops,
                                           const std::vector<std::string>& suite_operators);

// The entry as a job (part `part` of it, 1-based; 0: all of it): its operator's cases on its
// backend, with the run's salt and device.
// `parts`: how many the entry's cases are cut into here (0: the entry's own split).
Job job_of(const Entry& entry, Job::Mode mode, uint64_t salt, const std::string& device, int part = 0, int parts = 0);

// Verdicts of the entries' jobs (job_verdicts.h: a case without one becomes a failure), the
// missing ones completed from the suite manifest.
// `unreadable`: by Entry::key, the first line of the entry's verdict files that names no case
// (verdict.h): the reason its cases without a verdict have none.
// `interrupting`: the signal that stopped the run (interruption.h; 0: none), whose cases without a
// verdict are skipped, not failed: nothing but the run's stop is known to have kept them from one.
std::vector<Verdict> collect(const std::vector<Entry>& entries, const std::vector<Verdict>& written, Job::Mode mode,
                             uint64_t salt, const std::string& log_hint,
                             const std::map<std::string, std::string>& unreadable = {}, int interrupting = 0);

// Every verdict of a phase's files; a line that names no case is kept, located, for the
// entries whose verdicts its file holds (their first such line).
std::vector<Verdict> read_phase_verdicts(const std::vector<PhaseFile>& files, std::map<std::string, std::string>& unreadable);

// A kernel the run leaves out: its file, its operator and number, and why each of its cases fails.
struct LeftOutKernel {
  std::string source, op;
  int number = 0;
  std::string failure;
};

// The kernels that did not compile (`broken`: source → the compiler's first error), as LeftOutKernels.
std::vector<LeftOutKernel> uncompiled_kernels(const std::map<std::string, std::string>& broken, const std::string& logs);

// The kernels a kernel folder problem fails (kernel_folder.h): each of its cases fails with the diagnostic.
std::vector<LeftOutKernel> problem_kernels(const std::vector<model::KernelProblem>& problems);

// Entries for kernels that do not run: the cases their operator has in the selected suites, once
// per operator and number.
std::vector<Entry> unbuilt_entries(const BuildTree& tree, const RunPlan& request, const std::vector<LeftOutKernel>& kernels);

// How the correctness phase's entries are cut. By counts: an entry per part of the build's split,
// the reference's small jobs packed up to `limit` cases, the most cases first. By the time the
// cases took in earlier runs (entry_costs.h; when `costs` knows some of them): the costliest
// first; and where entries are served (cheap to start), an operator split until no part is
// longer than longest_entry_ms and small jobs packed up to it.
struct EntryCuts {
  size_t limit = 1;                  // most cases in a pack, by counts
  const CaseCosts* costs = nullptr;  // earlier runs' times; null or empty: by counts
  bool served = false;               // the entries are served: split and pack by time
  int at_once = 1;                   // entries run at once
  bool on_cuda = false;              // the run's device
};

// The correctness phase's CTest entries, each taking one slot of a GPU: each part of an entry,
// with the reference's small ones of a suite packed into one entry (entry_packs.h), whose jobs it
// reads from a JSON Lines file in `packs_folder`. `verdict_files` gets the file each entry writes
// its verdicts to, removed first (a stale one from an earlier run must not count). `by_time` says
// whether earlier runs' times planned them.
std::vector<FolderEntry> correctness_entries(const BuildTree& tree, const std::vector<Entry>& entries, uint64_t salt,
                                             const std::string& device, const GpuPlan& gpus, const EntryCuts& cuts,
                                             const std::string& packs_folder, std::vector<PhaseFile>& verdict_files,
                                             bool& by_time);

}  // namespace backendbench::planner
