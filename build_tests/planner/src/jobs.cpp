// The run's entries and their jobs, and the verdicts collected from them (jobs.h).
#include "planner/jobs.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "backendbench/files.h"
#include "language/diagnostic.h"
#include "language/naming.h"
#include "planner/entry_packs.h"
#include "planner/interruption.h"
#include "planner/text.h"
#include "backendbench/job_verdicts.h"

namespace backendbench::planner {

using files::write_whole;
namespace {

std::string fs_parent_name(const std::string& path) {
  const std::string folder = path.substr(0, path.find_last_of('/'));
  return folder.substr(folder.find_last_of('/') + 1);
}

// A kernel file's name without its folder and extension: relu_implementation_1.
std::string file_stem(const std::string& source) {
  const size_t name = source.find_last_of('/') + 1;
  return source.substr(name, source.find_last_of('.') - name);
}

}  // namespace

int cases_per_entry(const BuildTree& tree, const RunPlan& request) {
  return request.cases_per_entry.value_or(std::atoi(tree.cached("BACKENDBENCH_CASES_PER_ENTRY").value_or("0").c_str()));
}

std::vector<Entry> selected_entries(const BuildTree& tree, const RunPlan& request, bool some_kernels_broken) {
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
    throw error_at("--ops", "no cases of '" + joined(unmatched, "', '") + "' in suite " + joined(suite_names, ", "),
                   "operators the suites have (backendbench ops --suite <suite> lists them): " + joined(some, ", "));
  }
  if (entries.empty() && !some_kernels_broken) {
    const std::string named = request.kernels_label.empty() ? joined(request.op_libraries, ", ") : request.kernels_label;
    throw error_at("--backend", "no kernel in '" + named + "' serves the selected operators",
                   "a kernel folder with <op>/<op>_implementation_<N>.cpp|.cu for them (backendbench new <op> starts one), or --backend aten");
  }
  return entries;
}

Job job_of(const Entry& entry, Job::Mode mode, uint64_t salt, const std::string& device, int part, int parts) {
  Job job{entry.suite, entry.op, entry.backend, mode};
  job.salt = salt;
  if (!device.empty()) job.device = device;
  if (part) job.part = part, job.parts = parts ? parts : entry.parts;
  return job;
}

std::vector<Verdict> collect(const std::vector<Entry>& entries, const std::vector<Verdict>& written, Job::Mode mode,
                             uint64_t salt, const std::string& log_hint,
                             const std::map<std::string, std::string>& unreadable, int interrupting) {
  std::vector<Verdict> verdicts;
  for (const Entry& entry : entries) {
    std::vector<std::string> case_names;
    for (const SuiteManifest::Case& item : entry.cases) case_names.push_back(item.name);
    const auto bad_line = unreadable.find(entry.key());
    const std::string why = !entry.failure.empty()       ? entry.failure
                            : bad_line != unreadable.end() ? "no verdict: its file holds an unreadable line: " + bad_line->second
                                                           : "no verdict: the process running it ended first (" + log_hint + ")";
    const bool ran = entry.failure.empty() && entry.skip_reason.empty();
    const bool stopped = interrupting != 0 && ran && bad_line == unreadable.end();
    const std::string why_missing =
        stopped ? not_run_reason(interrupting) : why;
    // Both branches lvalues: `ran ? written : std::vector<Verdict>{}` copied every verdict of the
    // run for each entry (22,398 OpInfo verdicts, 129 entries: 9.3 s of a 15.2 s run on the 2-core machine).
    static const std::vector<Verdict> none;
    std::vector<Verdict> found = job_verdicts(job_of(entry, mode, salt, ""), case_names, ran ? written : none, why_missing,
                                              stopped ? MissingVerdict::kSkipped : MissingVerdict::kFails);
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

std::vector<LeftOutKernel> problem_kernels(const std::vector<model::KernelProblem>& problems) {
  std::vector<LeftOutKernel> kernels;
  for (const model::KernelProblem& problem : problems) {
    if (problem.op.empty() || problem.number == 0) continue;
    kernels.push_back({problem.diagnostic.file, problem.op, problem.number, problem.diagnostic.str()});
  }
  return kernels;
}

std::vector<Entry> unbuilt_entries(const BuildTree& tree, const RunPlan& request, const std::vector<LeftOutKernel>& kernels) {
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

std::vector<std::string> unmatched_filters(const std::vector<std::string>& ops,
                                           const std::vector<std::string>& suite_operators) {
  std::vector<std::string> unmatched;
  for (const std::string& filter : ops) {
    bool matched = false;
    for (const std::string& op : suite_operators) {
      const auto name = naming::OperatorName::from_user(op);
      matched = matched || (name && naming::matches_filter(*name, filter));
    }
    if (!matched) unmatched.push_back(filter);
  }
  return unmatched;
}

}  // namespace backendbench::planner
