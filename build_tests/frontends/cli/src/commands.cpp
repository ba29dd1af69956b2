// The backendbench command's subcommands; see commands.h. `run` drives the standard tools: CMake
// configures and builds what the selection needs, CTest runs the correctness entries, ./bench the
// timing; progress and every figure come from the verdicts they write (never from their output).
#include "cli/commands.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#if __has_include(<torch/headeronly/version.h>)
#include <torch/headeronly/version.h>
#else
#include <torch/version.h>
#endif

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "backendbench/files.h"
#include "backendbench/gpu_slot.h"
#include "supervisor/job_verdicts.h"
#include "backendbench/json_numbers.h"
#include "backendbench/results_folder.h"
#include "supervisor/run_case.h"
#include "backendbench/run_scores.h"
#include "backendbench/sandbox.h"
#include "backendbench/settings.h"
#include "backendbench/verdict.h"
#include "build_service/build_tree.h"
#include "build_service/entry_servers.h"
#include "build_service/gpu_files.h"
#include "cli/compare.h"
#include "cli/console_table.h"
#include "cli/entry_costs.h"
#include "cli/entry_packs.h"
#include "cli/errors.h"
#include "cli/findings.h"
#include "cli/generation_phase.h"
#include "cli/kernel_folder.h"
#include "build_service/process.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/tree_selection.h"
#include "agents/reward.h"
#include "agents/scaffold.h"
#include "emit/emitter.h"
#include "language/naming.h"
#include "schema/torch_schema.h"

namespace backendbench::cli {
namespace {

using Clock = std::chrono::steady_clock;

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

using files::write_whole;

std::string regex_escape(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

std::string figure(const char* format, double value) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// Prints progress: rewritten in place on a terminal, a line every 10 s otherwise (logs, CI).
class ProgressPrinter {
 public:
  ProgressPrinter() : terminal_(isatty(STDOUT_FILENO) != 0) {}
  void show(const std::string& line, bool final) {
    const auto now = Clock::now();
    if (terminal_) {
      std::cout << "\r\033[K" << line << (final ? "\n" : "") << std::flush;
    } else if (final || now - last_ >= std::chrono::seconds(10)) {
      std::cout << line << "\n" << std::flush;
      last_ = now;
    }
  }

 private:
  bool terminal_;
  Clock::time_point last_ = Clock::now();
};

using build::seconds_since;

// Configures the build folder for the selection, only where it does not serve it already
// (tree_selection.h).
void configure_tree(const BuildTree& tree, const TreeSelection& selection, const std::string& log_directory) {
  const BuildTree own(installation().source_directory, installation().build_directory);
  const std::map<std::string, std::string> values =
      tree_values(selection, [&](const std::string& name) { return tree.cached(name); });
  std::map<std::string, std::string> new_tree = {{"CMAKE_BUILD_TYPE", "Release"}, {"BACKENDBENCH_BUILD_TESTS", "OFF"}};
  // Only a new tree takes these; an existing one keeps its own.
  if (!tree.configured()) {
    for (const char* name : {"CMAKE_GENERATOR", "CMAKE_PREFIX_PATH", "CMAKE_INCLUDE_PATH", "BACKENDBENCH_CUDA",
                             "CMAKE_CUDA_ARCHITECTURES", "Python3_EXECUTABLE"}) {
      if (const auto value = own.cached(name); value && !value->empty()) new_tree[name] = *value;
    }
  }
  files::make_directories(log_directory);
  std::cout << (tree.configured() ? "configuring " : "configuring a new build folder ") << tree.build() << " (log: "
            << log_directory << "/configure.log)\n" << std::flush;
  if (!tree.configure(values, new_tree, log_directory + "/configure.log")) std::cout << "  unchanged\n";
}

// Builds `targets`, showing the build tool's "[done/total]" step count from its log as it grows.
void build_with_progress(const BuildTree& tree, const std::vector<std::string>& targets, int jobs, const std::string& log) {
  files::remove_tree(log);
  ProgressPrinter printer;
  const auto start = Clock::now();
  std::string steps;
  auto show = [&](bool final) {
    const std::string tail = tail_of_file(log, 1);
    if (tail.size() > 2 && tail[0] == '[' && tail.find('/') < tail.find(']')) steps = tail.substr(1, tail.find(']') - 1);
    printer.show("build  " + (steps.empty() ? std::string("starting") : steps + " steps") + "  " +
                     clock_text(seconds_since(start)) + " elapsed",
                 final);
  };
  try {
    tree.build_targets(targets, jobs, log, [&] { show(false); });
  } catch (const DiagnosticError&) {
    show(true);
    throw;
  }
  show(true);
}

// A verdict file a phase's entry writes, and the entries (Entry::key) whose verdicts it holds.
struct PhaseFile {
  std::string path;
  std::vector<std::string> entries;
};

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
int cases_per_entry(const BuildTree& tree, const RunRequest& request) {
  return request.cases_per_entry.value_or(std::atoi(tree.cached("BACKENDBENCH_CASES_PER_ENTRY").value_or("0").c_str()));
}

std::vector<Entry> selected_entries(const BuildTree& tree, const RunRequest& request, bool some_kernels_broken) {
  std::vector<Entry> entries;
  const int most_cases = cases_per_entry(tree, request);
  std::vector<std::string> operators;
  std::vector<std::string> suite_names;
  for (const SuiteChoice& suite : request.suites) {
    suite_names.push_back(suite.name);
    const SuiteManifest manifest = read_suite_manifest(tree.suite_manifest_path(suite.name));
    for (const SuiteManifest::Operator& op : manifest.operators) {
      operators.push_back(op.op);
      const auto name = naming::OperatorName::from_user(op.op);
      bool wanted = request.ops.empty();
      for (const std::string& filter : request.ops) wanted = wanted || naming::matches_filter(*name, filter);
      if (!wanted) continue;
      for (const SuiteManifest::Backend& backend : op.backends) {
        const bool chosen =
            backend.kind == "reference"    ? request.aten
            : backend.kind == "op_library" ? std::find(request.op_libraries.begin(), request.op_libraries.end(),
                                                       backend.name) != request.op_libraries.end()
                                           : !request.kernels_directory.empty() && !backend.expect_failure;
        if (!chosen) continue;
        Entry entry{suite.name, op.op, backend.name, backend.file, op.cases};
        entry.backend_facts = backend;
        const int parts = job_parts(op.cases.size(), most_cases);
        entry.parts = parts > 1 ? parts : 0;
        for (int k = 0; k < parts; ++k) {
          entry.ctest_names.push_back(naming::ctest_name(suite.name, *name, backend.name, entry.part(k), entry.parts));
          entry.verdicts_paths.push_back(tree.results_directory() + "/" +
                                         naming::result_file(suite.name, *name, backend.name, ".verdicts.jsonl",
                                                             entry.part(k), entry.parts));
        }
        entries.push_back(std::move(entry));
      }
    }
  }
  const std::vector<std::string> unmatched = unmatched_filters(request.ops, operators);
  if (!unmatched.empty()) {
    std::set<std::string> known(operators.begin(), operators.end());
    std::vector<std::string> some(known.begin(), known.end());
    if (some.size() > 25) some.resize(25), some.push_back("...");
    throw CliError("--ops", "no cases of '" + joined(unmatched, "', '") + "' in suite " + joined(suite_names, ", "),
                   "operators the suites have (backendbench ops --suite <suite> lists them): " + joined(some, ", "));
  }
  if (entries.empty() && !some_kernels_broken) {
    const std::string named = request.kernels_label.empty() ? joined(request.op_libraries, ", ") : request.kernels_label;
    throw CliError("--backend", "no kernel in '" + named + "' serves the selected operators",
                   "a kernel folder with <op>/<op>_implementation_<N>.cpp|.cu for them (backendbench new <op> starts one), or --backend aten");
  }
  return entries;
}

// The entry as a job (part `part` of it, 1-based; 0: all of it): its operator's cases on its
// backend, with the run's salt and device.
// `parts`: how many the entry's cases are cut into here (0: the entry's own split).
Job job_of(const Entry& entry, Job::Mode mode, uint64_t salt, const std::string& device, int part = 0, int parts = 0) {
  Job job{entry.suite, entry.op, entry.backend, mode};
  job.salt = salt;
  if (!device.empty()) job.device = device;
  if (part) job.part = part, job.parts = parts ? parts : entry.parts;
  return job;
}

// Verdicts of the entries' jobs (job_verdicts.h: a case without one becomes a failure), the
// missing ones completed from the suite manifest.
// `unreadable`: by Entry::key, the first line of the entry's verdict files that names no case
// (verdict.h): the reason its cases without a verdict have none.
std::vector<Verdict> collect(const std::vector<Entry>& entries, const std::vector<Verdict>& written, Job::Mode mode,
                             uint64_t salt, const std::string& log_hint,
                             const std::map<std::string, std::string>& unreadable = {}) {
  std::vector<Verdict> verdicts;
  for (const Entry& entry : entries) {
    std::vector<std::string> case_names;
    for (const SuiteManifest::Case& item : entry.cases) case_names.push_back(item.name);
    const auto bad_line = unreadable.find(entry.key());
    const std::string why = !entry.failure.empty()       ? entry.failure
                            : bad_line != unreadable.end() ? "no verdict: its file holds an unreadable line: " + bad_line->second
                                                           : "no verdict: the process running it ended first (" + log_hint + ")";
    const bool ran = entry.failure.empty() && entry.skip_reason.empty();
    // Both branches lvalues: `ran ? written : std::vector<Verdict>{}` copied every verdict of the
    // run for each entry (22,398 OpInfo verdicts, 129 entries: 9.3 s of a 15.2 s run on the 2-core machine).
    static const std::vector<Verdict> none;
    std::vector<Verdict> found = job_verdicts(job_of(entry, mode, salt, ""), case_names, ran ? written : none, why);
    for (size_t c = 0; c < found.size(); ++c) {
      Verdict& verdict = found[c];
      if (!entry.skip_reason.empty()) {
        verdict.status = Verdict::Status::kSkipped;
        verdict.errors.clear();
        verdict.skip_reason = entry.skip_reason;
        verdict.device = "cuda";
      }
      if (verdict.arguments.empty()) {
        const SuiteManifest::Case& item = entry.cases[c];
        verdict.arguments = item.arguments;
        verdict.trace_file = item.file;
        verdict.trace_line = item.line;
        verdict.count = item.count;
        verdict.kernel_file = entry.kernel_file;
      }
      verdicts.push_back(std::move(verdict));
    }
  }
  return verdicts;
}

// The cores this process may run on (a scheduler's cgroup or affinity, not the machine's).
int cores_here() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) return std::max(1, CPU_COUNT(&allowed));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Intra-op threads for each of `at_once` entries sharing `cores`.
int threads_per_entry(int cores, int at_once) { return std::max(1, cores / std::max(1, at_once)); }

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

// A CTest folder of the run's own (CTestTestfile.cmake), named and labelled as the build's
// entries. `ctest --test-dir` runs it with the user's CTest (-j, --output-junit, the resource
// spec), and nothing selects entries by name.
void write_ctest_folder(const std::string& folder, const std::vector<FolderEntry>& entries, const std::string& timeout) {
  std::string text = "# @generated by backendbench run: one CTest entry per job of this run.\n";
  for (const FolderEntry& entry : entries) {
    const std::string name = emit::cmake_argument(entry.name);
    text += "add_test(" + name;
    for (const std::string& argument : entry.command) text += " " + emit::cmake_argument(argument);
    text += ")\nset_tests_properties(" + name + " PROPERTIES LABELS " + emit::cmake_argument(entry.labels) + " TIMEOUT " +
            timeout + " COST " + std::to_string(entry.cost) + " SKIP_RETURN_CODE 77" +
            (entry.gpu_slots ? " RESOURCE_GROUPS gpus:" + std::to_string(entry.gpu_slots) : std::string()) +
            (entry.alone ? " RUN_SERIAL TRUE" : "") + ")\n";
  }
  files::remove_tree(folder);
  files::make_directories(folder);
  files::write_whole(folder + "/CTestTestfile.cmake", text);
}

std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// How a phase's CTest folder runs: here, with ctest; or with --slurm as Slurm array tasks, task k
// running entries k+1, k+1+tasks, ... (ctest -I) on the GPUs Slurm gave it, its resource spec
// written by `backendbench gpus` where it runs. `sbatch --wait` returns when every task has
// ended; the verdict files (on the shared file system) are then read as a local run's.
// `junit`: where ctest writes JUnit ("" none); Slurm's tasks write <folder>/junit.<k>.xml.
std::vector<std::string> phase_command(const RunRequest& request, const std::string& folder, const std::string& phase,
                                       int jobs, const GpuPlan& gpus, const std::string& junit,
                                       const std::vector<std::string>& ctest_arguments) {
  if (!request.slurm) {
    std::vector<std::string> argv = {BACKENDBENCH_CTEST_COMMAND, "--test-dir", folder, "-j", std::to_string(jobs)};
    if (!junit.empty()) argv.insert(argv.end(), {"--output-junit", junit});
    argv.insert(argv.end(), ctest_arguments.begin(), ctest_arguments.end());
    if (!gpus.spec_path.empty()) argv.insert(argv.end(), {"--resource-spec-file", gpus.spec_path});
    return argv;
  }
  const SlurmChoice& slurm = *request.slurm;
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  const std::string backendbench = length > 0 ? std::string(self, length) : "backendbench";
  std::string script = "#!/bin/sh\n# @generated by backendbench run: the " + phase +
                       " entries as Slurm array tasks (docs/ctest.md, \"Many hosts, with Slurm\").\n";
  script += "#SBATCH --job-name=backendbench-" + phase + "\n";
  script += "#SBATCH --array=0-" + std::to_string(slurm.tasks - 1) + "\n";
  script += "#SBATCH --output=" + folder + "/slurm.%a.log\n";
  if (slurm.gpus_per_task) script += "#SBATCH --gres=gpu:" + std::to_string(slurm.gpus_per_task) + "\n";
  script += "set -e\ntask=$SLURM_ARRAY_TASK_ID\necho \"task $task on $(hostname), CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"\n";
  std::string ctest = shell_quoted(BACKENDBENCH_CTEST_COMMAND) + " --test-dir " + shell_quoted(folder) +
                      " -I $((task + 1)),," + std::to_string(slurm.tasks) + " -j " + std::to_string(jobs);
  if (!junit.empty()) ctest += " --output-junit " + shell_quoted(folder) + "/junit.$task.xml";
  for (const std::string& argument : ctest_arguments) ctest += " " + shell_quoted(argument);
  if (gpus.gpus) {
    script += shell_quoted(backendbench) + " gpus --slots " + std::to_string(gpus.slots) + " --out " + shell_quoted(folder) +
              "/gpus.$task.json\n";
    ctest += " --resource-spec-file " + shell_quoted(folder) + "/gpus.$task.json";
  }
  script += "exec " + ctest + "\n";
  const std::string path = folder + "/" + phase + ".sbatch";
  write_whole(path, script);
  std::vector<std::string> argv = {"sbatch", "--wait"};
  argv.insert(argv.end(), slurm.sbatch_arguments.begin(), slurm.sbatch_arguments.end());
  argv.push_back(path);
  return argv;
}

// After a Slurm phase: its tasks' logs appended to the phase's log, their JUnit files joined into
// one (<testsuites> of each task's <testsuite>) at `junit` when it is not "".
void gather_slurm_outputs(const RunRequest& request, const std::string& folder, const std::string& log,
                          const std::string& junit) {
  if (!request.slurm) return;
  std::string logs, suites;
  for (int task = 0; task < request.slurm->tasks; ++task) {
    const std::string task_log = folder + "/slurm." + std::to_string(task) + ".log";
    if (exists(task_log)) logs += "\n==== Slurm array task " + std::to_string(task) + " ====\n" + read_text(task_log);
    std::string xml = read_text(folder + "/junit." + std::to_string(task) + ".xml");
    if (xml.rfind("<?xml", 0) == 0) xml = xml.substr(xml.find("?>") + 2);
    suites += xml;
  }
  std::ofstream(log, std::ios::app) << logs;
  if (!junit.empty()) write_whole(junit, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>" + suites + "\n</testsuites>\n");
}

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
                                             bool& by_time) {
  const std::string case_timeout = tree.cached("BACKENDBENCH_CASE_TIMEOUT").value_or("120");
  // Milliseconds per case of each entry: as measured before; an operator never run before costs
  // what the median one of this run did.
  std::vector<std::optional<double>> measured;
  std::vector<double> known;
  for (const Entry& entry : entries) {
    measured.push_back(cuts.costs == nullptr ? std::nullopt
                                             : cuts.costs->per_case(entry.suite, entry.op, entry.backend,
                                                                    entry.backend_facts.runs_on_cpu(cuts.on_cuda) ? "cpu" : "cuda"));
    if (measured.back()) known.push_back(*measured.back());
  }
  by_time = !known.empty();
  double typical = 1.0, total_ms = 0;
  if (by_time) {
    std::nth_element(known.begin(), known.begin() + static_cast<std::ptrdiff_t>(known.size() / 2), known.end());
    typical = known[known.size() / 2];
  }
  std::vector<double> per_case;
  for (size_t i = 0; i < entries.size(); ++i) {
    per_case.push_back(measured[i].value_or(typical));
    total_ms += per_case.back() * static_cast<double>(entries[i].cases.size());
  }
  const bool cut_by_time = by_time && cuts.served;
  const double longest_ms = longest_entry_ms(total_ms, cuts.at_once);

  struct Part {
    const Entry* entry;
    int part, parts;  // part (1-based; 0: the whole entry) of parts
    std::string name, verdicts;
    size_t cases;
    double ms;  // estimated
  };
  std::vector<Part> parts;
  std::vector<PackUnit> units;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = entries[i];
    const double entry_ms = per_case[i] * static_cast<double>(entry.cases.size());
    const int wanted = cut_by_time ? parts_for(entry.cases.size(), entry_ms, longest_ms, entry.parts) : std::max(1, entry.parts);
    const auto name = naming::OperatorName::from_user(entry.op);
    for (int k = 0; k < wanted; ++k) {
      Part part{&entry, wanted > 1 ? k + 1 : 0, wanted > 1 ? wanted : 0, "", "", 0, 0};
      if (wanted == std::max(1, entry.parts)) {  // the entry's own split: its own names
        part.name = entry.ctest_names[static_cast<size_t>(k)];
        part.verdicts = entry.verdicts_paths[static_cast<size_t>(k)];
      } else {
        part.name = naming::ctest_name(entry.suite, *name, entry.backend, part.part, part.parts);
        part.verdicts = tree.results_directory() + "/" +
                        naming::result_file(entry.suite, *name, entry.backend, ".verdicts.jsonl", part.part, part.parts);
      }
      part.cases = entry.cases_in_part(part.part, part.parts);
      part.ms = per_case[i] * static_cast<double>(part.cases);
      units.push_back({entry.suite, cut_by_time ? static_cast<size_t>(std::llround(part.ms)) : part.cases,
                       part.parts > 0 || entry.backend_facts.kind != "reference"});
      parts.push_back(std::move(part));
    }
  }
  const std::vector<std::vector<size_t>> packs =
      pack_units(units, cut_by_time ? static_cast<size_t>(std::llround(longest_ms)) : cuts.limit);
  std::map<std::string, int> packs_of_suite, numbered;
  for (const std::vector<size_t>& pack : packs) packs_of_suite[units[pack.front()].suite] += pack.size() > 1;
  files::remove_tree(packs_folder);
  std::vector<FolderEntry> folder;
  for (const std::vector<size_t>& pack : packs) {
    const Part& first_part = parts[pack.front()];
    const Entry& first = *first_part.entry;
    std::vector<std::string> command = {tree.test_executable(first.suite)};
    std::string name;
    size_t cases = 0;
    double ms = 0;
    for (const size_t unit : pack) cases += parts[unit].cases, ms += parts[unit].ms;
    if (pack.size() == 1) {
      name = first_part.name;
      command.push_back("--backendbench_job=" +
                        job_json(job_of(first, Job::Mode::kCheck, salt, device, first_part.part, first_part.parts)));
      verdict_files.push_back({first_part.verdicts, {first.key()}});
    } else {
      const int number = ++numbered[first.suite], count = packs_of_suite[first.suite];
      name = naming::pack_ctest_name(first.suite, number, count);
      std::string jobs;
      for (const size_t unit : pack) {
        const Part& part = parts[unit];
        jobs += job_json(job_of(*part.entry, Job::Mode::kCheck, salt, device, part.part, part.parts)) + "\n";
      }
      const std::string job_file = packs_folder + "/" + naming::pack_result_file(first.suite, number, count, ".jobs.jsonl");
      files::make_directories(job_file.substr(0, job_file.find_last_of('/')));
      write_whole(job_file, jobs);
      command.push_back("--backendbench_job=" + job_file);
      PhaseFile file{tree.results_directory() + "/" + naming::pack_result_file(first.suite, number, count, ".verdicts.jsonl"), {}};
      for (const size_t unit : pack) file.entries.push_back(parts[unit].entry->key());
      verdict_files.push_back(std::move(file));
    }
    files::remove_tree(verdict_files.back().path);
    command.push_back("--backendbench_verdicts=" + verdict_files.back().path);
    command.push_back("--case-timeout=" + case_timeout);
    // CTest starts the costliest first: by time where known, else by cases.
    const size_t cost = by_time ? static_cast<size_t>(std::max<long long>(1, std::llround(ms))) : cases;
    folder.push_back({name, command, pack.size() == 1 ? first.suite + ";" + first.op + ";" + first.backend : first.suite,
                      cost, gpus.gpus ? 1 : 0, false, first.backend_facts.kind != "reference"});
  }
  return folder;
}

std::string fs_parent_name(const std::string& path) {
  const std::string folder = path.substr(0, path.find_last_of('/'));
  return folder.substr(folder.find_last_of('/') + 1);
}

// Every verdict of a phase's files; a line that names no case is kept, located, for the
// entries whose verdicts its file holds (their first such line).
std::vector<Verdict> read_phase_verdicts(const std::vector<PhaseFile>& files, std::map<std::string, std::string>& unreadable) {
  std::vector<Verdict> verdicts;
  for (const PhaseFile& file : files) {
    VerdictFile read = read_verdicts(file.path);
    for (Verdict& verdict : read.verdicts) verdicts.push_back(std::move(verdict));
    if (read.unreadable.empty()) continue;
    for (const std::string& entry : file.entries) unreadable.emplace(entry, read.unreadable.front());
  }
  return verdicts;
}

nlohmann::json versions(const BuildTree& tree) {
  nlohmann::json info = {{"torch", TORCH_VERSION}, {"cxx_compiler", BACKENDBENCH_CXX_COMPILER}};
  const long cudart = at::detail::getCUDAHooks().hasCUDA() ? at::detail::getCUDAHooks().versionCUDART() : 0;
  info["cuda_runtime"] = cudart ? std::to_string(cudart / 1000) + "." + std::to_string(cudart % 1000 / 10) : "";
  info["cuda_compiler"] = BACKENDBENCH_CUDA_COMPILER;  // "" where .cu kernels are not built
  std::string gpu = process_output({"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"});
  while (!gpu.empty() && (gpu.back() == '\n' || gpu.back() == ' ')) gpu.pop_back();
  info["gpu"] = gpu;
  std::string commit = process_output({"git", "-C", tree.source(), "rev-parse", "HEAD"});
  if (!commit.empty()) commit.pop_back();
  if (!commit.empty() && !process_output({"git", "-C", tree.source(), "status", "--porcelain", "--untracked-files=no"}).empty()) {
    commit += "+uncommitted changes";
  }
  info["backendbench_commit"] = commit.empty() ? "unknown (not a git checkout)" : commit;
  utsname system{};
  uname(&system);
  info["os"] = std::string(system.sysname) + " " + system.release + " " + system.machine;
  return info;
}

std::string now_text(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof(text), format, &local);
  return text;
}

// Where this command was started: run.json keeps it, and the report shows paths relative to it.
std::string working_directory() {
  char buffer[PATH_MAX];
  return getcwd(buffer, sizeof(buffer)) ? std::string(buffer) : std::string();
}

void print_scores(const std::vector<Verdict>& verdicts, const nlohmann::json& run) {
  const double p = run.value("p", 1.0);
  std::cout << "\nscores (BackendBench's definitions: a row is one operator and kernel; a failed performance test counts as 1.0)\n";
  // A backend is a short name in the table, and the folder it names once below it.
  std::vector<std::vector<std::string>> score_rows;
  std::vector<std::string> named_paths;
  for (const nlohmann::json& group : group_scores(verdicts, run, p)) {
    auto value = [&](const char* key, const char* format) {
      return group[key].is_null() ? std::string("not timed") : figure(format, number_from_json(group[key]));
    };
    const std::string label = group["label"].get<std::string>(), name = short_backend_name(label);
    if (name != label) named_paths.push_back(name + ": " + label);
    score_rows.push_back({name, std::to_string(group["operators"].get<int>()), value("correctness", "%.2f"),
                          value("performance", "%.3fx"), value("perf_at_p", "%.2f")});
  }
  std::cout << table_text({{"backend"}, {"operators", true}, {"correctness", true}, {"performance", true},
                           {"perf@" + figure("%g", p), true}},
                          score_rows);
  for (const std::string& named : named_paths) std::cout << "  " << named << "\n";
  std::cout << "\nper operator\n";
  std::vector<std::vector<std::string>> operator_rows;
  for (const OperatorResult& row : operator_results(verdicts)) {
    operator_rows.push_back({row.op, short_backend_name(row.backend), row.correct() ? "yes" : "NO",
                             std::to_string(row.correctness_tests), std::to_string(row.correctness_tests - row.passed_correctness),
                             std::to_string(row.performance_tests), row.performance_tests ? figure("%.3fx", row.geomean_speedup()) : "-"});
  }
  std::cout << table_text({{"operator"}, {"backend"}, {"correct", true}, {"tests", true}, {"failed", true}, {"timed", true},
                           {"speedup", true}},
                          operator_rows);
  std::map<std::string, int> skipped;
  for (const Verdict& verdict : verdicts) {
    if (verdict.status == Verdict::Status::kSkipped) ++skipped[verdict.backend + ": " + verdict.skip_reason];
  }
  if (!skipped.empty()) std::cout << "\nskipped tests (not counted):\n";
  for (const auto& [reason, count] : skipped) std::cout << "  " << count << " × " << reason << "\n";
  int shown = 0, failed = 0;
  for (const Verdict& verdict : verdicts) failed += verdict.status == Verdict::Status::kFailed;
  if (failed) std::cout << "\n" << failed << " failed tests (all in failed_tests.json and report.html); the first:\n";
  for (const Verdict& verdict : verdicts) {
    if (verdict.status != Verdict::Status::kFailed || shown++ >= 10) continue;
    // What went wrong first; the case after it, named once (its full text is in the files above).
    std::string message = first_failure_reason(verdict);
    if (message.size() > 300) message = message.substr(0, 300) + "...";
    std::cout << "  [" << verdict.suite << " " << verdict.backend << (is_performance_test(verdict) ? " timing" : "") << "] "
              << verdict.op << " " << verdict.case_name << ": " << message << "\n";
  }
  const Findings findings = run_findings(verdicts, run);
  int wrong = 0;
  for (const KernelFinding& kernel : findings.kernels) {
    if (!kernel.wrong() || kernel.reproduce.empty()) continue;
    if (wrong++ == 0) std::cout << "\nto run a wrong kernel's first failed case again (its salt, its case):\n";
    if (wrong > 10) continue;
    std::cout << "  " << kernel.op << " " << kernel.backend << (kernel.kernel_file.empty() ? "" : " (" + kernel.kernel_file + ")")
              << ", " << kernel.failed << " of " << kernel.tests << " failed:\n    " << kernel.reproduce << "\n";
  }
  if (wrong > 10) std::cout << "  and " << wrong - 10 << " more wrong kernels (report.html lists each with its command)\n";
}

// Google Benchmark's JSON outputs of the run's ./bench entries as one: the first's context, every
// output's benchmarks in entry order (an entry that wrote none, a crashed one, adds none).
std::string merged_benchmark_json(const std::vector<std::string>& outputs) {
  nlohmann::json merged;
  merged["benchmarks"] = nlohmann::json::array();
  for (const std::string& path : outputs) {
    if (!exists(path)) continue;
    nlohmann::json one = nlohmann::json::parse(read_text(path), nullptr, false);
    if (!one.is_object()) continue;
    if (!merged.contains("context") && one.contains("context")) merged["context"] = one["context"];
    for (nlohmann::json& benchmark : one.value("benchmarks", nlohmann::json::array())) merged["benchmarks"].push_back(benchmark);
  }
  return merged.dump(2) + "\n";
}

// Runs one phase (ctest or ./bench), printing progress from the verdict files it appends to.
// `start`: when the phase began (its supervisors' start included, for the correctness phase).
int run_phase(const std::string& phase, const std::vector<std::string>& argv, const ProcessOptions& options,
              const std::vector<PhaseFile>& verdict_files, int64_t total, Clock::time_point start = Clock::now()) {
  std::vector<std::string> paths;
  for (const PhaseFile& file : verdict_files) paths.push_back(file.path);
  VerdictFollower follower(paths);
  ProgressPrinter printer;
  ProgressCounts counts;
  const int status = run_process(argv, options, [&] {
    counts = follower.update();
    counts.total = total;
    printer.show(progress_line(phase, counts, seconds_since(start)), false);
  });
  counts = follower.update();
  counts.total = total;
  printer.show(progress_line(phase, counts, seconds_since(start)), true);
  return status;
}

// Removes a staging folder unless it was moved into place.
class StagingFolder {
 public:
  explicit StagingFolder(std::string path) : path_(std::move(path)) { files::make_directories(path_ + "/logs"); }
  ~StagingFolder() {
    if (kept_) return;
    if (preserved_) {
      std::cerr << "the run did not finish; what the model wrote is kept in " << path_ << "\n";
      return;
    }
    files::remove_tree(path_);
  }
  const std::string& path() const { return path_; }
  // Keeps the folder even when the run does not finish: it holds what a model was paid to write.
  void preserve() { preserved_ = true; }
  void move_to(const std::string& destination) {
    const std::string previous = destination + ".previous-" + std::to_string(getpid());
    const bool replacing = exists(destination);
    if (replacing && std::rename(destination.c_str(), previous.c_str()) != 0) {
      throw CliError(destination, "cannot replace the earlier results folder", "a writable folder");
    }
    if (std::rename(path_.c_str(), destination.c_str()) != 0) {
      if (replacing) std::rename(previous.c_str(), destination.c_str());
      throw CliError(destination, "cannot move the results into place", "a writable folder");
    }
    kept_ = true;
    if (replacing) files::remove_tree(previous);
  }

 private:
  std::string path_;
  bool kept_ = false, preserved_ = false;
};


// Kernels whose library does not build, each with the first error line of its own build log
// (<logs>/<target>.log): each kernel target is built alone, so one kernel's error is its own.
std::map<std::string, std::string> broken_kernels(const BuildTree& tree, int jobs, const std::string& logs) {
  std::map<std::string, std::string> broken;
  for (const BuildTree::KernelTarget& kernel : tree.kernel_targets()) {
    const std::string log = logs + "/" + kernel.target + ".log";
    files::remove_tree(log);
    if (tree.build_target(kernel.target, jobs, log)) continue;
    std::string first = "see " + log;
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (line.find("error") != std::string::npos) {
        first = line;
        break;
      }
    }
    broken[kernel.source] = first;
  }
  return broken;
}

// A kernel file's name without its folder and extension: relu_implementation_1.
std::string file_stem(const std::string& source) {
  const size_t name = source.find_last_of('/') + 1;
  return source.substr(name, source.find_last_of('.') - name);
}

// A kernel the run leaves out: its file, its operator and number, and why each of its cases fails.
struct LeftOutKernel {
  std::string source, op;
  int number = 0;
  std::string failure;
};

// The kernels that did not compile (`broken`: source → the compiler's first error), as LeftOutKernels.
std::vector<LeftOutKernel> uncompiled_kernels(const std::map<std::string, std::string>& broken, const std::string& logs) {
  std::vector<LeftOutKernel> kernels;
  for (const auto& [source, error] : broken) {
    const std::string folder = fs_parent_name(source);
    const std::string stem = file_stem(source);
    const auto op = naming::OperatorName::from_folder(folder);
    const auto number = naming::implementation_number(folder, stem);
    if (!op || !number) continue;
    kernels.push_back({source, op->display(), *number,
                       source + " did not compile (" + logs + "/backendbench_kernel_" + stem + ".log): " + error});
  }
  return kernels;
}

// The kernels a kernel folder problem fails (kernel_folder.h): each of its cases fails with the diagnostic.
std::vector<LeftOutKernel> problem_kernels(const std::vector<model::KernelProblem>& problems) {
  std::vector<LeftOutKernel> kernels;
  for (const model::KernelProblem& problem : problems) {
    if (problem.op.empty() || problem.number == 0) continue;
    kernels.push_back({problem.diagnostic.file, problem.op, problem.number, problem.diagnostic.str()});
  }
  return kernels;
}

// Entries for kernels that do not run: the cases their operator has in the selected suites, once
// per operator and number.
std::vector<Entry> unbuilt_entries(const BuildTree& tree, const RunRequest& request, const std::vector<LeftOutKernel>& kernels) {
  std::vector<Entry> entries;
  std::set<std::pair<std::string, int>> seen;
  for (const LeftOutKernel& kernel : kernels) {
    const auto op = naming::OperatorName::from_user(kernel.op);
    if (!op || !seen.insert({kernel.op, kernel.number}).second) continue;
    bool wanted = request.ops.empty();
    for (const std::string& filter : request.ops) wanted = wanted || naming::matches_filter(*op, filter);
    if (!wanted) continue;
    for (const SuiteChoice& suite : request.suites) {
      for (const SuiteManifest::Operator& listed : read_suite_manifest(tree.suite_manifest_path(suite.name)).operators) {
        if (listed.op != op->display()) continue;
        Entry entry{suite.name, listed.op, naming::variant_name(kernel.number), kernel.source, listed.cases};
        entry.failure = kernel.failure;
        entries.push_back(entry);
      }
    }
  }
  return entries;
}
// The salt a cassette's recorded run used (its cassette.json); nullopt when it has none.
std::optional<uint64_t> recorded_salt(const std::string& cassette) {
  std::ifstream in(cassette + "/cassette.json");
  if (!in) return std::nullopt;
  const nlohmann::json recorded = nlohmann::json::parse(in, nullptr, false);
  if (!recorded.is_object() || !recorded.contains("salt") || !recorded["salt"].is_string()) return std::nullopt;
  return parse_salt(recorded["salt"].get<std::string>());
}

// How the kept kernel of `op` did on the hold-out: every case of the run, the run's own salt.
nlohmann::json holdout_of(const std::vector<Verdict>& verdicts, const std::string& op) {
  int passed = 0, failed = 0, skipped = 0;
  std::vector<double> speedups;
  for (const Verdict& verdict : verdicts) {
    // The kept kernel is the run's only kernel folder: its backends are impl<N> (aten and op
    // libraries are named otherwise).
    if (verdict.op != op || verdict.backend.rfind("impl", 0) != 0) continue;
    if (verdict.frontend == "bench") {
      if (verdict.passed() && verdict.timing) speedups.push_back(verdict.timing->speedup);
      continue;
    }
    if (verdict.status == Verdict::Status::kPassed) ++passed;
    if (verdict.status == Verdict::Status::kFailed) ++failed;
    if (verdict.status == Verdict::Status::kSkipped) ++skipped;
  }
  double log_sum = 0;
  for (double speedup : speedups) log_sum += std::log(speedup);
  return {{"passed", passed}, {"failed", failed}, {"skipped", skipped},
          {"speedup", speedups.empty() ? nlohmann::json() : nlohmann::json(std::exp(log_sum / speedups.size()))}};
}

// One line per operator: what was kept, how it did on the feedback cases and on the hold-out,
// and what it cost.
void print_generation(const nlohmann::json& generation) {
  std::cout << "\n" << generation.value("backend", "") << " (" << generation.value("client", "") << "):\n";
  for (const nlohmann::json& op : generation["operators"]) {
    const nlohmann::json& holdout = op["holdout"];
    const int passed = holdout.value("passed", 0), failed = holdout.value("failed", 0);
    const bool feedback_ok = op.value("correct_on_feedback", false);
    std::string verdict = failed == 0 && passed > 0 ? "hold-out passed" : "hold-out failed";
    if (feedback_ok && failed > 0) verdict = "caught by the hold-out (correct on the feedback cases only)";
    std::cout << "  " << op.value("operator", "") << ": kept " << (op["kept"].is_null() ? std::string("nothing (no code)") : op["kept"].get<std::string>())
              << " after " << op["attempts"].size() << (op["attempts"].size() == 1 ? " candidate, " : " candidates, ") << (feedback_ok ? "correct" : "not correct")
              << " on feedback; " << verdict << " (" << passed << " of " << passed + failed << " cases passed); tokens "
              << op.value("input_tokens", int64_t{0}) << " in + " << op.value("output_tokens", int64_t{0}) << " out"
              << (op["cost_usd"].is_null() ? std::string() : ", $" + figure("%.4f", op["cost_usd"].get<double>())) << ", "
              << figure("%.1f", op.value("wall_seconds", 0.0)) << " s\n";
  }
  if (!generation.value("stopped", std::string()).empty()) std::cout << "  stopped early: " << generation.value("stopped", std::string()) << "\n";
}

}  // namespace

RunContext run_context(const Installation& installation) {
  RunContext context;
  context.source_directory = installation.source_directory;
  context.default_build_directory = installation.build_directory;
  const BuildTree own(installation.source_directory, installation.build_directory);
  std::string traces = own.cached("BACKENDBENCH_TORCHBENCH_TRACES").value_or("");
  const std::string beside = installation.source_directory + "/../shared/traces/torchbench";
  if (traces.empty() && exists(beside)) traces = beside;
  context.default_torchbench_traces = traces;
  context.default_jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  context.now_stamp = now_text("%Y%m%d_%H%M%S");
  context.cuda_available = cuda_available();
  context.python_kernels = BACKENDBENCH_WITH_PYTHON_BRIDGE;
  context.on_path = [](const std::string& program) { return !find_on_path(program).empty(); };
  return context;
}

bool operator_known(const std::string& filter) {
  const auto name = naming::OperatorName::from_user(filter);
  if (!name) return false;
  if (schema::TorchSchemaSource().find(*name)) return true;
  if (filter.find('.') != std::string::npos) return false;
  for (const c10::OperatorName& op : c10::Dispatcher::singleton().getAllOpNames()) {
    if (op.name == name->schema_name()) return true;  // a base name with overloads, none of them the default
  }
  return false;
}

// The GPUs this process can hand out (gpu_slot.h).
int gpus_here() {
  return gpus_to_allocate([](const char* name) { return std::getenv(name); },
                          cuda_available() ? at::detail::getCUDAHooks().getNumGPUs() : 0);
}

int gpus_command(int slots, const std::string& out) {
  const std::string spec = ctest_resource_spec(gpus_here(), slots);
  if (out.empty() || out == "-") {
    std::cout << spec;
  } else {
    files::write_whole(out, spec);
  }
  return 0;
}

uint64_t run_salt(const RunRequest& request) {
  return request.salt_given ? request.salt : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
}

namespace {

// A run of `backendbench run`, carried from one phase to the next (run_command: its phases in
// order, like lit's main()).
struct Run {
  Run(const RunRequest& given, const std::string& command)
      : request(given),
        command_line(command),
        where(installation()),
        staging(request.out + ".partial-" + std::to_string(getpid())),
        tree(where.source_directory, request.build),
        logs(request.build + "/backendbench_logs"),
        kernel_view(request.build + "/backendbench_kernel_view"),
        started(now_text("%Y-%m-%dT%H:%M:%S%z")),
        start(Clock::now()) {
    // A generating backend writes its kernels into the results folder, which the run then scores.
    if (request.generation) {
      request.kernels_directory = staging.path() + "/kernels";
      files::make_directories(request.kernels_directory);
    }
  }

  RunRequest request;
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
  std::optional<GenerationPhase> generation;
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
};

// What the run is, said before anything runs; its salt (a replay's is its recording's) and the
// environment every process of the run reads its policy from.
void announce_run(Run& run) {
  RunRequest& request = run.request;
  for (const SuiteChoice& suite : request.suites) run.suite_names.push_back(suite.name);
  if (request.aten) run.backend_labels.push_back("aten");
  if (!request.kernels_directory.empty()) {
    run.backend_labels.push_back(request.kernels_label == request.kernels_directory
                                     ? request.kernels_label
                                     : request.kernels_label + " (" + request.kernels_directory + ")");
  }
  for (const std::string& library : request.op_libraries) run.backend_labels.push_back(library + " (op library)");
  // A replay draws what its recording drew (the cassette keeps the recorded run's salt).
  if (request.generation && !request.generation->replay.empty() && !request.salt_given) {
    if (const auto recorded = recorded_salt(request.generation->replay)) {
      request.salt = *recorded;
      request.salt_given = true;
    }
  }
  run.salt = run_salt(request);
  if (request.generation && !request.generation->record.empty()) {
    files::make_directories(request.generation->record);
    write_whole(request.generation->record + "/cassette.json",
                nlohmann::json{{"schema", "backendbench-cassette"}, {"version", 1}, {"salt", salt_text(run.salt)}, {"command", run.command_line}}.dump(1) + "\n");
  }
  std::cout << "backendbench run: suites " << joined(run.suite_names, ", ") << "; backends " << joined(run.backend_labels, ", ")
            << (request.ops.empty() ? "" : "; operators " + joined(request.ops, ", ")) << "; device "
            << (request.device.empty() ? "cuda when available, else cpu" : request.device) << "; timing "
            << (request.timed_suites.empty() ? std::string("off") : "on for " + joined({request.timed_suites.begin(), request.timed_suites.end()}, ", "))
            << "; salt " << salt_text(run.salt) << "\n";
  // The kernels' builds (backendbench-build-sandbox, their compiler launcher) and workers
  // (ProcessOptions below) read this: sandboxed unless the user said --no-sandbox.
  setenv("BACKENDBENCH_SANDBOX", request.sandbox ? "bwrap" : "none", 1);
  // Every entry, ./bench and served supervisor of the run reads the policy from its environment.
  if (request.kernels_must_compute) setenv("BACKENDBENCH_KERNELS_MUST_COMPUTE", "1", 1);
  run.selection = TreeSelection{request.suites,
                                request.kernels_directory.empty() ? run.where.source_directory + "/generated_kernels" : request.kernels_directory,
                                request.ops, request.topn, request.torchbench_traces, request.op_libraries,
                                request.generation ? request.generation->limits.concurrency : 0};
}

// The kernel folder's problems, before any build: each is said once here, fails its own
// kernel's cases, and is left out of what the build reads (a view of the folder without it).
void leave_out_kernel_folder_problems(Run& run) {
  const RunRequest& request = run.request;
  if (request.kernels_directory.empty() || request.generation) return;
  run.problems = kernel_folder_problems(request.kernels_directory, working_directory());
  if (run.problems.empty()) return;
  std::cout << "the kernel folder has " << run.problems.size() << (run.problems.size() == 1 ? " problem" : " problems")
            << ": left out of the build, their kernels' cases fail (each is listed with the results)\n";
  write_kernel_view(request.kernels_directory, left_out_paths(run.problems), run.kernel_view);
  run.selection.kernels_view_of = run.selection.kernels_directory;
  run.selection.kernels_directory = run.kernel_view;
}

// A generating backend: what its loop needs built, then the loop, which writes the kernels the
// run then scores. False when that build fails (said on stderr).
bool generate_kernels_phase(Run& run) {
  const RunRequest& request = run.request;
  std::vector<std::string> test_targets;
  for (const SuiteChoice& suite : request.suites) test_targets.push_back("backendbench_test_" + suite.name);
  // Best-of-N times each correct candidate on its timed feedback cases.
  if (!request.generation->limits.first_correct_wins && !request.timed_suites.empty()) test_targets.push_back("bench");
  // The kernel folder is still empty, so nothing else asks for the Python bridge yet.
  if (request.generation->language == KernelLanguage::kPython) test_targets.push_back("backendbench_python");
  std::cout << "building " << joined(test_targets, ", ") << " (log: " << run.logs << "/build.log)\n" << std::flush;
  try {
    build_with_progress(run.tree, test_targets, request.jobs, run.logs + "/build.log");
  } catch (const DiagnosticError& error) {
    std::cerr << error.what() << "\n";
    return false;
  }
  run.staging.preserve();  // from the first question on, the folder holds what the model was paid to write
  run.generation = run_generation(request, run.tree, run.staging.path(), run.salt, run.where.templates_directory, run.logs);
  std::cout << "scoring the kept kernels on every case with the run's salt " << salt_text(run.salt) << " (the hold-out)\n";
  return true;
}

// The GPUs CTest hands out, from a resource spec the run writes (docs: "Every GPU of a
// machine"); --device cpu hands out none. With --slurm, each task hands out the GPUs Slurm gave
// it. Then each process's environment: the sandbox, and each entry's share of the cores.
void plan_gpus_and_processes(Run& run) {
  const RunRequest& request = run.request;
  GpuPlan& gpus = run.gpus;
  gpus.slots = request.gpu_slots;
  if (request.slurm) {
    gpus.gpus = request.slurm->gpus_per_task;
  } else if (request.device != "cpu") {
    gpus.gpus = gpus_here();
    if (gpus.gpus) {
      gpus.spec_path = run.logs + "/gpus.json";
      write_whole(gpus.spec_path, ctest_resource_spec(gpus.gpus, gpus.slots));
    }
  }
  // Kernels run in sandboxed workers (kernel_workers.h) unless the user said --no-sandbox.
  run.environment.environment["BACKENDBENCH_SANDBOX"] = request.sandbox ? "bwrap" : "none";
  run.ctest_options = run.environment;
  // Each entry would otherwise start an intra-op thread per core (ATen's default): 16 entries on
  // the 64 cores of a 4-GPU host ran 1,024 threads, and every entry took twice as long as it did
  // 4 at a time. Each gets its share of the cores, unless the user chose OMP_NUM_THREADS.
  if (std::getenv("OMP_NUM_THREADS") == nullptr && !request.slurm) {
    const int at_once = gpus.gpus ? std::min(request.jobs, gpus.gpus * gpus.slots) : request.jobs;
    run.ctest_options.environment["OMP_NUM_THREADS"] = std::to_string(threads_per_entry(cores_here(), at_once));
  }
}

// The plan of the supervisors kept for `executables` (entry_servers.h).
EntryServers::Plan servers_plan(const Run& run, const std::vector<EntryServers::Executable>& executables) {
  EntryServers::Plan plan;
  plan.executables = executables;
  for (int gpu = 0; gpu < run.gpus.gpus; ++gpu) plan.gpus.push_back(std::to_string(gpu));
  plan.kernel_root = run.tree.build();
  plan.environment = run.ctest_options.environment;
  plan.log_path = run.logs + "/servers.log";
  if (!run.bubblewrap.empty()) {
    plan.gpu_files = run.gpu_files;
    plan.bubblewrap = run.bubblewrap;
  }
  return plan;
}

// The supervisors kept for the correctness phase (entry_servers.h), one per GPU slot of each test
// executable: an entry hands them its job instead of starting libtorch and CUDA itself. Not
// with Slurm, whose tasks run on other hosts. Those of each executable that exists start now, so
// that their start (and their spare workers') overlaps the build: after an edit of one kernel on
// the 2-core machine, they took 0.6 s of a 2.2 s run after it. What the plan of the entries
// needs beyond them starts after the build; all start again if the build linked an executable anew.
void start_servers_before_the_build(Run& run) {
  const RunRequest& request = run.request;
  run.served = request.entry_servers && !request.slurm;
  // Servers of an executable on a GPU (on the CPU): as many as entries may run there at once.
  run.servers_at_once = run.gpus.gpus ? std::min(request.jobs, run.gpus.slots) : request.jobs;
  // Each supervisor on a GPU sees that GPU's device file alone, where the sandbox's bubblewrap
  // can start it so (entry_servers.h): CUDA's start then opens one GPU, not all of the host's.
  if (run.served && run.gpus.gpus > 0 && request.sandbox) {
    if (const std::optional<std::string> found = bubblewrap_executable()) {
      run.gpu_files = build::gpu_device_files();
      if (static_cast<int>(run.gpu_files.size()) == run.gpus.gpus) run.bubblewrap = *found;
    }
  }
  if (!run.served || request.generation) return;
  const bool kernels = !request.kernels_directory.empty() || !request.op_libraries.empty();
  // All of them where the cores are many: each starts libtorch and a spare beside the build (a
  // core for each of them and the compiler), and one the plan lacks after the build cost an
  // edit's run 0.5 s on an H200 machine. One on fewer cores.
  const int early = std::max(1, std::min(run.servers_at_once, cores_here() / 4));
  std::vector<EntryServers::Executable> existing;
  for (const SuiteChoice& suite : request.suites) {
    const std::string path = run.tree.build() + "/backendbench_test_" + suite.name;
    if (access(path.c_str(), X_OK) == 0) existing.push_back({path, early, kernels});
  }
  if (!existing.empty()) run.servers.emplace(servers_plan(run, existing));  // logs/: made by configure_tree
}

// The suites' test executables (and ./bench where the run times). A kernel that does not compile
// fails its own cases; the others still run (also when no kernel compiles: each fails with its
// own compiler error). False when the build fails with every kernel building alone, which is not
// a kernel's fault and ends the run (said on stderr).
bool build_targets(Run& run) {
  const RunRequest& request = run.request;
  std::vector<std::string> targets;
  for (const SuiteChoice& suite : request.suites) targets.push_back("backendbench_test_" + suite.name);
  if (!request.timed_suites.empty()) targets.push_back("bench");
  std::cout << "building " << joined(targets, ", ") << " (log: " << run.logs << "/build.log)\n" << std::flush;
  const auto build_start = Clock::now();
  try {
    build_with_progress(run.tree, targets, request.jobs, run.logs + "/build.log");
  } catch (const DiagnosticError& error) {
    std::cout << "  the build failed; building each kernel alone to find which do not compile\n" << std::flush;
    if (!request.kernels_directory.empty()) run.broken = broken_kernels(run.tree, request.jobs, run.logs);
    if (run.broken.empty()) {
      std::cerr << error.what() << "\n";
      return false;
    }
    for (const auto& [source, message] : run.broken) std::cout << "  does not compile: " << source << "\n    " << message << "\n";
    // The view's own files are links into the folder: left out as the folder's.
    std::set<std::string> left_out = left_out_paths(run.problems);
    for (const auto& [source, message] : run.broken) {
      const bool in_view = source.rfind(run.kernel_view + "/", 0) == 0;
      left_out.insert(in_view ? request.kernels_directory + source.substr(run.kernel_view.size()) : source);
    }
    write_kernel_view(request.kernels_directory, left_out, run.kernel_view);
    std::cout << "  the other kernels run from " << run.kernel_view << " (links to them)\n";
    run.selection.kernels_view_of = request.kernels_directory;
    run.selection.kernels_directory = run.kernel_view;
    configure_tree(run.tree, run.selection, run.logs);
    try {
      build_with_progress(run.tree, targets, request.jobs, run.logs + "/build.log");
    } catch (const DiagnosticError& again) {
      std::cerr << again.what() << "\n";
      return false;
    }
  }
  std::cout << "  built in " << clock_text(seconds_since(build_start)) << "\n";
  // The build leaves the page cache full of dirty objects, which the kernel writes back about
  // 30 s later, during the measurements: written now instead. (Suspected, not shown, of the 2.4x
  // slow worker reference after a build on the 2-core machine: the failure came back with it.)
  sync();
  return true;
}

// The entries the run's processes judge, and those whose verdicts this process makes: kernels a
// folder problem left out, kernels that did not compile, and kernels that cannot run here.
void plan_entries(Run& run) {
  const RunRequest& request = run.request;
  run.entries = selected_entries(run.tree, request, !run.broken.empty() || !run.problems.empty());
  std::vector<LeftOutKernel> left_out_kernels = problem_kernels(run.problems);
  for (LeftOutKernel& kernel : uncompiled_kernels(run.broken, run.logs)) left_out_kernels.push_back(std::move(kernel));
  run.unbuilt = unbuilt_entries(run.tree, request, left_out_kernels);
  // A CUDA kernel on a machine without a GPU: its cases are skipped here, as its executable
  // would skip them, without starting a process per entry for each phase (on the 2-core
  // machine, 3 s a timing entry). Not in a Slurm run: its tasks have the GPUs, not this host.
  if (!request.slurm && !cuda_available()) {
    std::vector<Entry> runnable;
    for (Entry& entry : run.entries) {
      if (entry.backend_facts.kind == "kernel" && entry.backend_facts.cuda) {
        entry.skip_reason = no_cuda_device_reason(entry.backend);
        run.unbuilt.push_back(std::move(entry));
      } else {
        runnable.push_back(std::move(entry));
      }
    }
    run.entries = std::move(runnable);
  }
  if (!request.sandbox) std::cout << "WARNING: --no-sandbox: untrusted kernels run in workers WITHOUT a sandbox\n";
  // The device the cases run on (a C++ kernel's on the CPU whatever this says).
  run.runs_on = request.device.empty() ? (cuda_available() ? "cuda" : "cpu") : request.device;
  if (request.slurm) std::cout << "Slurm: " << request.slurm->tasks << " array tasks of " << run.gpus.gpus << " GPUs each\n";
  if (run.gpus.gpus) {
    std::cout << "GPUs: " << run.gpus.gpus << ", " << run.gpus.slots << " correctness entries at once on each; timing takes one alone\n";
  }
  run.timeout = run.tree.cached("BACKENDBENCH_TEST_TIMEOUT").value_or("1800");
}

// The served supervisors the correctness entries need, started (or extended) and listening; each
// entry then hands its job to them through backendbench-entry.
void serve_correctness_entries(Run& run, std::vector<FolderEntry>& correctness, Clock::time_point correctness_started) {
  // Per executable: as many servers on a GPU as entries may run there at once, but no more
  // than it has entries; spare workers where it has entries of kernels, which they load from
  // the build tree (the kernel libraries, the manifest).
  std::map<std::string, EntryServers::Executable> by_path;
  for (const FolderEntry& entry : correctness) {
    EntryServers::Executable& executable = by_path[entry.command.front()];
    if (executable.path.empty()) executable = {entry.command.front(), 0, false};
    executable.per_gpu = std::min(run.servers_at_once, executable.per_gpu + 1);
    executable.spares = executable.spares || entry.runs_kernels;
  }
  std::vector<EntryServers::Executable> executables;
  for (const auto& [path, executable] : by_path) executables.push_back(executable);
  const EntryServers::Plan plan = servers_plan(run, executables);
  if (run.servers && !run.servers->covers(plan)) run.servers.reset();  // an executable linked anew: all start again
  if (run.servers) {
    run.servers->extend(plan);
  } else {
    run.servers.emplace(plan);
  }
  run.servers->wait_until_listening();
  std::cout << "supervisors: " << run.servers->listening() << " of " << run.servers->started() << " listening after "
            << std::fixed << std::setprecision(1) << seconds_since(correctness_started) << std::defaultfloat
            << " s (--process-per-entry: none)\n";
  for (FolderEntry& entry : correctness) entry.command.insert(entry.command.begin(), {run.tree.entry_client(), run.servers->prefix()});
}

// Correctness: one job per entry or part, small ones packed, run by CTest from a folder of the
// run's own; the verdicts collected (a case without one fails), and the case times kept for the
// next run's plan.
void run_correctness_phase(Run& run) {
  const RunRequest& request = run.request;
  const GpuPlan& gpus = run.gpus;
  std::vector<PhaseFile> verdict_files;
  int64_t cases = 0;
  for (const Entry& entry : run.entries) cases += static_cast<int64_t>(entry.cases.size());
  const int entries_at_once = (request.slurm ? request.slurm->tasks : 1) *
                              (gpus.gpus ? std::min(request.jobs, gpus.gpus * gpus.slots) : request.jobs);
  const std::string job_entries = run.logs + "/jobs", job_packs = run.logs + "/job_packs";
  // What each operator's cases took in earlier runs of this build (entry_costs.h).
  const std::string costs_path = run.logs + "/case_costs.json";
  CaseCosts costs = CaseCosts::read(costs_path);
  EntryCuts cuts;
  cuts.limit = request.pack_small_jobs ? pack_limit(static_cast<size_t>(cases), cases_per_entry(run.tree, request), entries_at_once,
                                                    gpus.gpus > 0)
                                       : 1;
  // --one-job-per-entry: each job (or part) its own entry, as the build splits them.
  cuts.costs = request.pack_small_jobs ? &costs : nullptr;
  cuts.served = run.served;
  cuts.at_once = entries_at_once;
  cuts.on_cuda = device_kind(run.runs_on) == "cuda";
  bool by_time = false;
  std::vector<FolderEntry> correctness =
      correctness_entries(run.tree, run.entries, run.salt, request.device, gpus, cuts, job_packs, verdict_files, by_time);
  if (!correctness.empty()) {
    std::cout << "correctness entries: " << correctness.size()
              << (by_time ? run.served ? ", cut and ordered by the case times of earlier runs (logs/case_costs.json)"
                                       : ", ordered by the case times of earlier runs (logs/case_costs.json)"
                          : ", cut by case counts (no earlier run's times)")
              << "\n";
  }
  ProcessOptions& ctest_options = run.ctest_options;
  ctest_options.log_path = run.logs + "/ctest.log";
  files::remove_tree(ctest_options.log_path);
  const auto correctness_started = Clock::now();
  if (run.served && !correctness.empty()) {
    serve_correctness_entries(run, correctness, correctness_started);
  } else if (run.servers) {
    run.servers->close();  // started before the build for entries that the plan does not have
  }
  write_ctest_folder(job_entries, correctness, run.timeout);
  const std::vector<std::string> ctest_command = phase_command(request, job_entries, "correctness", request.jobs, gpus,
                                                              run.staging.path() + "/junit.xml", {"--output-on-failure"});
  const int ctest_status =
      run.entries.empty() ? 0 : run_phase("correctness", ctest_command, ctest_options, verdict_files, cases, correctness_started);
  // Each phase's seconds as its progress counts them (from the supervisors' start on), unrounded:
  // the multi-GPU measurement divides them (scripts/gpu_scaling.py).
  run.phase_seconds["correctness"] = seconds_since(correctness_started);
  // Ending while the run reads the verdicts (waited for when the run ends).
  if (run.servers) run.servers->close();
  if (ctest_status != 0 && ctest_status != 8) {
    std::cerr << ctest_command.front() << " ended with status " << ctest_status << " (log: " << ctest_options.log_path << ")\n";
  }
  gather_slurm_outputs(request, job_entries, ctest_options.log_path, run.staging.path() + "/junit.xml");
  files::remove_tree(job_entries);
  files::remove_tree(job_packs);
  std::map<std::string, std::string> unreadable;
  const std::vector<Verdict> written = read_phase_verdicts(verdict_files, unreadable);
  run.verdicts = collect(run.entries, written, Job::Mode::kCheck, run.salt, "logs/ctest.log", unreadable);
  // The next run is planned by what these cases took (a case that never ran measured nothing).
  costs.learn(run.verdicts);
  try {
    costs.write(costs_path);
  } catch (const std::exception& error) {
    std::cerr << "backendbench: warning: the cases' times were not kept for the next run: " << error.what() << "\n";
  }
  for (Verdict& verdict : collect(run.unbuilt, {}, Job::Mode::kCheck, run.salt, "")) run.verdicts.push_back(std::move(verdict));
}

// Timing: ./bench on each entry (or part) of the timed suites, one benchmark per case, run by
// CTest too: each takes every slot of one GPU, so no other entry shares its GPU.
void run_timing_phase(Run& run) {
  const RunRequest& request = run.request;
  const GpuPlan& gpus = run.gpus;
  std::vector<Entry> timed_entries;
  std::vector<FolderEntry> folder;
  std::vector<PhaseFile> bench_verdicts;
  std::vector<std::string> bench_outputs;
  int64_t timed = 0;
  const bool on_cuda = run.runs_on == "cuda";
  const std::string bench_folder = run.logs + "/bench";
  files::remove_tree(bench_folder);
  files::make_directories(bench_folder);
  for (const Entry& entry : run.entries) {
    if (!request.timed_suites.count(entry.suite)) continue;
    timed_entries.push_back(entry);
    timed += static_cast<int64_t>(entry.cases.size());
    for (size_t k = 0; k < entry.ctest_names.size(); ++k) {
      const std::string stem = bench_folder + "/" + std::to_string(folder.size());
      bench_verdicts.push_back({stem + ".verdicts.jsonl", {entry.key()}});
      bench_outputs.push_back(stem + ".benchmark.json");
      folder.push_back({"timing/" + entry.ctest_names[k],
                        {run.tree.bench_executable(),
                         "--backendbench_job=" + job_json(job_of(entry, Job::Mode::kTime, run.salt, request.device, entry.part(k))),
                         "--benchmark_out=" + bench_outputs.back(), "--benchmark_out_format=json",
                         "--backendbench_verdicts=" + bench_verdicts.back().path},
                        "timing;" + entry.suite + ";" + entry.op + ";" + entry.backend,
                        entry.part_cases(k),
                        gpus.gpus ? gpus.slots : 0,
                        // Timed on the CPU (a C++ kernel in a CUDA run too): beside no other
                        // ./bench, whose threads would take the cores it is timed on (on an
                        // H200 pair a C++ relu's reference read 8 ms beside the other GPU's
                        // ./bench, 40 us alone: a 15x speedup that was 0.08x).
                        entry.backend_facts.runs_on_cpu(on_cuda)});
    }
  }
  const std::string timing_entries = run.logs + "/timing";
  write_ctest_folder(timing_entries, folder, run.timeout);
  ProcessOptions bench_options = run.environment;
  bench_options.log_path = run.logs + "/bench.log";
  files::remove_tree(bench_options.log_path);
  // One ./bench per GPU at once, one timed on the CPU alone; in a CPU run one at a time.
  const int timing_jobs = on_cuda && gpus.gpus ? std::min(request.jobs, gpus.gpus) : 1;  // per Slurm task too
  const std::vector<std::string> bench_command = phase_command(request, timing_entries, "timing", timing_jobs, gpus, "", {"-V"});
  const auto timing_started = Clock::now();
  const int bench_status = folder.empty() ? 0 : run_phase("timing", bench_command, bench_options, bench_verdicts, timed, timing_started);
  run.phase_seconds["timing"] = seconds_since(timing_started);
  if (bench_status != 0 && bench_status != 8) {
    std::cerr << bench_command.front() << " (timing) ended with status " << bench_status << " (log: " << bench_options.log_path << ")\n";
  }
  gather_slurm_outputs(request, timing_entries, bench_options.log_path, "");
  std::map<std::string, std::string> timed_unreadable;
  const std::vector<Verdict> timed_written = read_phase_verdicts(bench_verdicts, timed_unreadable);
  for (Verdict& verdict : collect(timed_entries, timed_written, Job::Mode::kTime, run.salt, "logs/bench.log", timed_unreadable)) {
    run.verdicts.push_back(std::move(verdict));
  }
  for (const Entry& entry : run.unbuilt) {
    if (!request.timed_suites.count(entry.suite)) continue;
    for (Verdict& verdict : collect({entry}, {}, Job::Mode::kTime, run.salt, "")) run.verdicts.push_back(std::move(verdict));
  }
  if (!folder.empty()) write_whole(run.staging.path() + "/benchmark.json", merged_benchmark_json(bench_outputs));
  files::remove_tree(timing_entries);
  files::remove_tree(bench_folder);
}

// run.json: what was run, where, with what, how long each phase took, and the scores.
nlohmann::json run_json(const Run& run) {
  const RunRequest& request = run.request;
  nlohmann::json described = {{"schema", "backendbench-run"},
                              {"version", 1},
                              {"command", run.command_line},
                              {"started", run.started},
                              {"seconds", seconds_since(run.start)},
                              {"suites", run.suite_names},
                              {"backends", run.backend_labels},
                              {"kernels_label", request.kernels_label.empty() ? "directory" : request.kernels_label},
                              {"kernels_directory", request.kernels_directory},
                              {"op_libraries", request.op_libraries},
                              {"ops", request.ops},
                              {"topn", request.topn},
                              {"device", run.runs_on},
                              {"timed_suites", request.timed_suites},
                              {"p", request.p},
                              {"salt", salt_text(run.salt)},
                              {"sandboxed", request.sandbox},
                              {"kernels_must_compute", request.kernels_must_compute},
                              {"build_directory", request.build},
                              {"working_directory", working_directory()},
                              {"versions", versions(run.tree)}};
  if (request.slurm) described["slurm"] = {{"tasks", request.slurm->tasks}, {"gpus_per_task", request.slurm->gpus_per_task}};
  if (run.gpus.gpus) described["gpu_slots"] = run.gpus.slots;
  described["phase_seconds"] = run.phase_seconds;
  // The kernels that did not compile (findings.h's reproduce_command: how to see why again).
  described["kernels_not_compiled"] = nlohmann::json::array();
  for (const auto& [source, message] : run.broken) described["kernels_not_compiled"].push_back(source);
  described["kernel_problems"] = kernel_problems_json(run.problems);
  described["scores"] = group_scores(run.verdicts, described, request.p);
  if (run.generation) {
    const GenerationChoice& choice = *request.generation;
    nlohmann::json generation = generation_json(run.generation->result);
    generation["backend"] = choice.backend;
    generation["client"] = run.generation->client;
    generation["api"] = model_api_name(choice.model.api);
    generation["model"] = choice.model.model;
    generation["language"] = kernel_language_name(choice.language);
    generation["rounds"] = choice.limits.rounds;
    generation["workers"] = choice.limits.workers;
    generation["concurrency"] = choice.limits.concurrency;
    generation["select"] = choice.limits.first_correct_wins ? "first" : "best";
    generation["feedback_salt"] = salt_text(run.generation->feedback_salt);
    generation["holdout_salt"] = salt_text(run.salt);
    for (nlohmann::json& op : generation["operators"]) op["holdout"] = holdout_of(run.verdicts, op.value("operator", ""));
    described["generation"] = generation;
  }
  return described;
}

// The results folder, written whole in the staging folder and moved into place: the verdicts,
// BackendBench's files, run.json, the report and the logs.
nlohmann::json write_results(Run& run) {
  std::string lines;
  for (const Verdict& verdict : run.verdicts) lines += verdict_json(verdict) + "\n";
  write_whole(run.staging.path() + "/verdicts.jsonl", lines);
  nlohmann::json described = run_json(run);
  write_original_files(run.staging.path(), original_files(run.verdicts, run.command_line, run.request.p, backend_names(described)));
  write_whole(run.staging.path() + "/run.json", described.dump(1) + "\n");
  write_whole(run.staging.path() + "/report.html",
              report_html(report_data(run.verdicts, described), run.where.templates_directory, read_text(run.where.plotly_js_path)));
  for (const char* log : {"configure.log", "build.log", "ctest.log", "bench.log"}) {
    if (exists(run.logs + "/" + log)) write_whole(run.staging.path() + "/logs/" + log, read_text(run.logs + "/" + log));
  }
  run.staging.move_to(run.request.out);
  return described;
}

// The scores and where the results are; the exit status: 1 when a case failed or the kernel
// folder had a problem.
int report_run(const Run& run, const nlohmann::json& described) {
  print_scores(run.verdicts, described);
  if (run.generation) print_generation(described["generation"]);
  if (!run.problems.empty()) {
    std::cout << "\nkernel folder problems (" << run.problems.size() << ", also in run.json and the report):\n";
    for (const model::KernelProblem& problem : run.problems) std::cout << "  " << problem.diagnostic.str() << "\n";
  }
  std::cout << "\nresults: " << run.request.out << "\nreport:  " << run.request.out << "/report.html\n";
  if (!run.problems.empty()) return 1;
  for (const Verdict& verdict : run.verdicts) {
    if (verdict.status == Verdict::Status::kFailed) return 1;
  }
  return 0;
}

}  // namespace

// A run's phases, in order: what it is, the kernel folder's problems left out, the build tree
// configured, kernels generated (a generating backend), the GPUs and processes planned, served
// supervisors started beside the build, the build, the entries planned, correctness, timing, the
// results folder, the report.
int run_command(const RunRequest& given, const std::string& command_line) {
  Run run(given, command_line);
  announce_run(run);
  leave_out_kernel_folder_problems(run);
  configure_tree(run.tree, run.selection, run.logs);
  if (run.request.generation && !generate_kernels_phase(run)) return 3;
  plan_gpus_and_processes(run);
  start_servers_before_the_build(run);
  if (!build_targets(run)) return 3;
  plan_entries(run);
  run_correctness_phase(run);
  if (!run.request.timed_suites.empty()) run_timing_phase(run);
  const nlohmann::json described = write_results(run);
  return report_run(run, described);
}

int reward_command(const RewardArguments& given) {
  const Installation where = installation();
  RunArguments arguments;
  arguments.suite = given.suite;
  arguments.backend = "aten";
  arguments.device = given.device;
  arguments.build = given.build;
  arguments.traces = given.traces;
  arguments.salt = given.salt;
  arguments.topn = given.topn;
  arguments.timing = given.timing;
  const RunRequest request = check_run_arguments(arguments, run_context(where), operator_known);
  if (given.cases != "holdout" && given.cases != "feedback") {
    throw CliError("--cases", "unknown case set '" + given.cases + "'", "holdout (every case, the salt) or feedback (every second case, a salt derived from it)");
  }
  if (given.concurrency < 1) throw CliError("--concurrency", "less than 1", "at least 1 candidate at a time");
  // Standard output carries the rewards alone: what configuring and building print goes to
  // standard error.
  struct StdoutToStderr {  // until the rewards start, and on every way out
    std::streambuf* const saved = std::cout.rdbuf(std::cerr.rdbuf());
    ~StdoutToStderr() { std::cout.rdbuf(saved); }
    void end() const { std::cout.rdbuf(saved); }
  } redirected;
  const BuildTree tree(where.source_directory, request.build);
  const std::string logs = request.build + "/backendbench_logs";
  setenv("BACKENDBENCH_SANDBOX", given.sandbox ? "bwrap" : "none", 1);
  const uint64_t salt = run_salt(request);
  const bool feedback = given.cases == "feedback";
  // A kernel folder of its own, empty: candidates are built in slots, and the suites' executables
  // must build whatever a kernel folder holds (the llm backends start from an empty one too).
  const std::string work = given.work.empty() ? request.build + "/backendbench_reward" : std::filesystem::absolute(given.work).string();
  files::make_directories(work + "/no_kernels");
  configure_tree(tree, {request.suites, work + "/no_kernels", {}, request.topn, request.torchbench_traces, {}, given.concurrency}, logs);
  std::vector<std::string> targets, suites;
  for (const SuiteChoice& suite : request.suites) {
    targets.push_back("backendbench_test_" + suite.name);
    suites.push_back(suite.name);
  }
  if (!request.timed_suites.empty()) targets.push_back("bench");
  if (BACKENDBENCH_WITH_PYTHON_BRIDGE) targets.push_back("backendbench_python");
  try {
    build_with_progress(tree, targets, request.jobs, logs + "/build.log");
  } catch (const DiagnosticError& error) {
    std::cerr << error.what() << "\n";
    return 3;
  }
  RewardOptions options{tree, suites, request.timed_suites, request.device, feedback ? feedback_salt_of(salt) : salt, feedback,
                        given.concurrency, 60, given.sandbox, given.keep_attempts, work, where.templates_directory};
  RewardService service(options);
  std::cerr << "backendbench reward: suites " << joined(suites, ", ") << "; " << (feedback ? "feedback" : "holdout")
            << " cases, salt " << salt_text(options.salt) << "; timing "
            << (request.timed_suites.empty() ? std::string("off") : "on for " + joined({request.timed_suites.begin(), request.timed_suites.end()}, ", "))
            << "; " << given.concurrency << " at once" << (given.sandbox ? "" : "; NOT sandboxed (--no-sandbox)")
            << "\nready: one candidate per line on standard input, {\"id\", \"op\", \"language\", \"source\"}\n" << std::flush;
  redirected.end();
  int line_number = 0;
  service.stream(
      [&]() -> std::optional<RewardCandidate> {
        for (std::string line; std::getline(std::cin, line);) {
          ++line_number;
          if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
          try {
            return reward_candidate_from_json(line, "<stdin>:" + std::to_string(line_number));
          } catch (const DiagnosticError& error) {
            RewardCandidate unreadable;
            unreadable.invalid = error.what();
            // Its id where one can be read, so that the answer still finds its request.
            const nlohmann::json item = nlohmann::json::parse(line, nullptr, false);
            if (item.is_object() && item.contains("id") && (item["id"].is_string() || item["id"].is_number_integer())) {
              unreadable.id = item["id"].is_string() ? item["id"].get<std::string>() : std::to_string(item["id"].get<int64_t>());
            }
            return unreadable;
          }
        }
        return std::nullopt;
      },
      [&](const Reward& reward) { std::cout << reward_json(reward).dump() << "\n" << std::flush; });
  return 0;
}

int ops_command(const OpsRequest& request) {
  const Installation where = installation();
  RunArguments arguments;
  arguments.suite = request.suite;
  arguments.traces = request.traces;
  arguments.build = request.build;
  arguments.backend = request.kernels.empty() ? "directory" : request.kernels;
  const RunRequest checked = check_run_arguments(arguments, run_context(where), operator_known);
  if (checked.suites.size() != 1) throw CliError("--suite", "several suites given", "one suite");
  const BuildTree tree(where.source_directory, checked.build);
  configure_tree(tree, {checked.suites, checked.kernels_directory, {}, 0, checked.torchbench_traces, {}},
                 checked.build + "/backendbench_logs");
  try {
    tree.build_targets({"backendbench_generate_" + checked.suites[0].name}, checked.jobs,
                       checked.build + "/backendbench_logs/build.log");
  } catch (const DiagnosticError& error) {
    std::cerr << error.what() << "\n";
    return 3;
  }
  const SuiteManifest manifest = read_suite_manifest(tree.suite_manifest_path(checked.suites[0].name));
  char line[512];
  std::cout << "suite " << manifest.suite << ": " << manifest.operators.size() << " operators";
  int64_t total = 0;
  for (const auto& op : manifest.operators) total += static_cast<int64_t>(op.cases.size());
  std::cout << ", " << total << " cases (" << manifest.excluded_inputs << " inputs excluded, listed in "
            << checked.build << "/generated/" << manifest.suite << "/excluded.csv)\nkernels: " << checked.kernels_directory
            << "\n\n";
  std::snprintf(line, sizeof(line), "  %-40s %6s  %s\n", "operator", "cases", "kernels");
  std::cout << line;
  int with_kernels = 0;
  for (const auto& op : manifest.operators) {
    std::vector<std::string> kernels;
    for (const auto& backend : op.backends) {
      if (backend.kind != "kernel") continue;
      kernels.push_back(backend.name + (backend.cuda ? " (cuda)" : "") + (backend.language == "python" ? " (python)" : "") +
                        (backend.derived_from.empty() ? "" : " (from " + backend.derived_from + ")"));
    }
    with_kernels += !kernels.empty();
    std::snprintf(line, sizeof(line), "  %-40s %6zu  %s\n", op.op.c_str(), op.cases.size(),
                  kernels.empty() ? "-" : joined(kernels, ", ").c_str());
    std::cout << line;
  }
  std::cout << "\n" << with_kernels << " of " << manifest.operators.size() << " operators have kernels\n";
  return 0;
}

int new_command(const std::string& op, bool cuda, const std::string& kernels_directory) {
  const Installation where = installation();
  const std::string directory = kernels_directory.empty() ? where.source_directory + "/generated_kernels" : kernels_directory;
  const ScaffoldedKernel kernel =
      scaffold_kernel(op, directory, cuda, schema::TorchSchemaSource(), where.templates_directory, TORCH_VERSION);
  write_scaffold(kernel);
  const std::string backend = kernels_directory.empty() ? "directory" : kernels_directory;
  std::cout << "created " << kernel.path << "\n  " << kernel.declaration << "\n"
            << "It fails every case until it is written. Then:\n"
            << "  " << where.build_directory << "/backendbench run --suite smoke,edge --backend " << backend << " --ops "
            << kernel.op << "\n"
            << "      correctness and timing, the scores, a results folder and its report\n"
            << "  ctest --test-dir " << where.build_directory << " -R '" << regex_escape(kernel.op) << "/" << kernel.backend
            << "$' --output-on-failure\n"
            << "      correctness with CTest (after a run or a build has added the entry)\n"
            << "  " << where.build_directory << "/bench --benchmark_filter='" << regex_escape(kernel.op) << "/.*/"
            << kernel.backend << "$'\n"
            << "      timing with Google Benchmark\n";
  return 0;
}

ResultsRun read_results_folder(const std::string& directory) {
  if (!exists(directory + "/run.json") || !exists(directory + "/verdicts.jsonl")) {
    throw CliError(directory, "not a results folder", "a folder written by backendbench run (run.json, verdicts.jsonl)");
  }
  ResultsRun results;
  try {
    results.run = nlohmann::json::parse(read_text(directory + "/run.json"));
  } catch (const nlohmann::json::exception& error) {
    throw CliError(directory + "/run.json", std::string("unreadable (") + error.what() + ")", "the run.json backendbench run wrote");
  }
  VerdictFile file = read_verdicts(directory + "/verdicts.jsonl");
  results.verdicts = std::move(file.verdicts);
  results.unreadable = std::move(file.unreadable);
  for (const std::string& line : results.unreadable) std::cerr << line << "\n";
  return results;
}

int report_command(const std::vector<std::string>& directories, const std::string& page) {
  const Installation where = installation();
  std::vector<ResultsRun> runs;
  std::vector<nlohmann::json> run_files;
  for (const std::string& directory : directories) {
    runs.push_back(read_results_folder(directory));
    run_files.push_back(runs.back().run);
  }
  const std::vector<std::string> tags = run_tags(directories, run_files);
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].tag = tags[i];
    std::cout << (runs.size() > 1 ? "\n" + tags[i] + " (" + directories[i] + "): " : "backendbench report: ")
              << runs[i].run.value("command", std::string()) << "\n";
    print_scores(runs[i].verdicts, runs[i].run);
    if (runs.size() == 1 && runs[i].run.contains("generation")) print_generation(runs[i].run["generation"]);
  }
  const std::string written =
      !page.empty() ? page : runs.size() == 1 ? directories[0] + "/report.html" : std::string("backendbench_report.html");
  write_whole(written, report_html(combined_report_data(runs), where.templates_directory, read_text(where.plotly_js_path)));
  std::cout << "\nreport: " << written << "\n";
  // A line no case could be given is a result lost: said above, and in the status.
  for (const ResultsRun& run : runs) {
    if (!run.unreadable.empty()) return 1;
  }
  return 0;
}

int compare_command(const std::string& before, const std::string& after, double threshold, bool fail_on_regression,
                    const std::string& html) {
  std::vector<Verdict> runs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string& directory = i == 0 ? before : after;
    if (!exists(directory + "/verdicts.jsonl")) {
      throw CliError(directory, "not a results folder", "a folder written by backendbench run (it holds verdicts.jsonl)");
    }
    VerdictFile file = read_verdicts(directory + "/verdicts.jsonl");
    for (const std::string& line : file.unreadable) std::cerr << line << "\n";
    runs[i] = std::move(file.verdicts);
  }
  const Comparison comparison = compare_runs(runs[0], runs[1], threshold);
  std::cout << comparison_text(comparison, before, after, threshold);
  const std::string page = html.empty() ? after + "/compare.html" : html;
  write_whole(page, comparison_html(comparison, before, after, threshold));
  std::cout << "\nthe comparison as a page: " << page << "\n";
  return fail_on_regression && !comparison.regressions.empty() ? 1 : 0;
}

}  // namespace backendbench::cli
