// The run of `backendbench run` as the planner's named phases (run.h).
#include "planner/run.h"

#include <unistd.h>

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <random>
#include <set>
#include <utility>

#include "backendbench/files.h"
#include "backendbench/gpu_slot.h"
#include "language/json_text.h"
#include "planner/results_folder.h"
#include "planner/run_scores.h"
#include "backendbench/sandbox.h"
#include "backendbench/settings.h"
#include "backendbench/verdict.h"
#include "planner/build_steps.h"
#include "planner/entry_costs.h"
#include "planner/entry_packs.h"
#include "planner/gpu_files.h"
#include "planner/kernel_folder.h"
#include "planner/progress.h"
#include "planner/report.h"
#include "planner/findings.h"
#include "planner/text.h"

namespace backendbench::planner {

using files::write_whole;
namespace {

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

}  // namespace

Run::Run(const RunPlan& given, const std::string& command)
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
  if (request.kernels_written_during_run) {
    request.kernels_directory = staging.path() + "/kernels";
    files::make_directories(request.kernels_directory);
  }
}

uint64_t run_salt(const RunPlan& request) {
  return request.salt_given ? request.salt : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
}

void announce_run(Run& run) {
  RunPlan& request = run.request;
  for (const SuiteChoice& suite : request.suites) run.suite_names.push_back(suite.name);
  if (request.aten) run.backend_labels.push_back("aten");
  if (!request.kernels_directory.empty()) {
    run.backend_labels.push_back(request.kernels_label == request.kernels_directory
                                     ? request.kernels_label
                                     : request.kernels_label + " (" + request.kernels_directory + ")");
  }
  for (const std::string& library : request.op_libraries) run.backend_labels.push_back(library + " (op library)");
  run.salt = run_salt(request);
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
                                request.candidate_slots};
}

void leave_out_kernel_folder_problems(Run& run) {
  const RunPlan& request = run.request;
  if (request.kernels_directory.empty() || request.kernels_written_during_run) return;
  run.problems = kernel_folder_problems(request.kernels_directory, working_directory());
  if (run.problems.empty()) return;
  std::cout << "the kernel folder has " << run.problems.size() << (run.problems.size() == 1 ? " problem" : " problems")
            << ": left out of the build, their kernels' cases fail (each is listed with the results)\n";
  write_kernel_view(request.kernels_directory, left_out_paths(run.problems), run.kernel_view);
  run.selection.kernels_view_of = run.selection.kernels_directory;
  run.selection.kernels_directory = run.kernel_view;
}

void configure_run_tree(Run& run) { configure_tree(run.tree, run.selection, run.logs); }

void plan_gpus_and_processes(Run& run) {
  const RunPlan& request = run.request;
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

void start_servers_before_the_build(Run& run) {
  const RunPlan& request = run.request;
  run.served = request.entry_servers && !request.slurm;
  // Servers of an executable on a GPU (on the CPU): as many as entries may run there at once.
  run.servers_at_once = run.gpus.gpus ? std::min(request.jobs, run.gpus.slots) : request.jobs;
  // Each supervisor on a GPU sees that GPU's device file alone, where the sandbox's bubblewrap
  // can start it so (entry_servers.h): CUDA's start then opens one GPU, not all of the host's.
  if (run.served && run.gpus.gpus > 0 && request.sandbox) {
    if (const std::optional<std::string> found = bubblewrap_executable()) {
      run.gpu_files = planner::gpu_device_files();
      if (static_cast<int>(run.gpu_files.size()) == run.gpus.gpus) run.bubblewrap = *found;
    }
  }
  if (!run.served || request.kernels_written_during_run) return;
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

bool build_targets(Run& run) {
  const RunPlan& request = run.request;
  std::vector<std::string> targets;
  for (const SuiteChoice& suite : request.suites) targets.push_back("backendbench_test_" + suite.name);
  if (!request.timed_suites.empty()) targets.push_back("bench");
  // The kernel libraries beside the executables, which load them at start-up and do not wait for
  // them (BACKENDBENCH_KERNELS_APART): past a kernel that does not compile, the rest is built.
  std::vector<std::string> with_kernels = targets;
  with_kernels.push_back("backendbench_kernels");
  std::cout << "building " << joined(targets, ", ") << " and the kernels (log: " << run.logs << "/build.log)\n" << std::flush;
  const auto build_start = Clock::now();
  try {
    build_with_progress(run.tree, with_kernels, request.jobs, run.logs + "/build.log", true);
  } catch (const DiagnosticError& error) {
    // Each kernel built alone says whether it is to blame (a library left from an earlier build
    // does not count: its target fails again), and with its own first error.
    std::cout << "  the build failed; building each kernel alone to find which do not compile\n" << std::flush;
    if (!request.kernels_directory.empty()) run.broken = broken_kernels(run.tree, request.jobs, run.logs);
    try {
      if (run.broken.empty()) throw;
      build_with_progress(run.tree, targets, request.jobs, run.logs + "/build.log");
    } catch (const DiagnosticError& again) {
      std::cerr << again.what() << "\n";
      return false;
    }
    // A kernel view's files are links into the folder: said as the folder's.
    std::map<std::string, std::string> in_folder;
    for (const auto& [source, message] : run.broken) {
      const bool in_view = source.rfind(run.kernel_view + "/", 0) == 0;
      in_folder[in_view ? request.kernels_directory + source.substr(run.kernel_view.size()) : source] = message;
    }
    run.broken = std::move(in_folder);
    for (const auto& [source, message] : run.broken) std::cout << "  does not compile: " << source << "\n    " << message << "\n";
    std::cout << "  their cases fail with that error; the other kernels run\n";
  }
  std::cout << "  built in " << clock_text(seconds_since(build_start)) << "\n";
  // The build leaves the page cache full of dirty objects, which the kernel writes back about
  // 30 s later, during the measurements: written now instead. (Suspected, not shown, of the 2.4x
  // slow worker reference after a build on the 2-core machine: the failure came back with it.)
  sync();
  return true;
}

void plan_entries(Run& run) {
  const RunPlan& request = run.request;
  run.entries = selected_entries(run.tree, request, !run.broken.empty() || !run.problems.empty());
  std::vector<LeftOutKernel> left_out_kernels = problem_kernels(run.problems);
  for (LeftOutKernel& kernel : uncompiled_kernels(run.broken, run.logs)) left_out_kernels.push_back(std::move(kernel));
  run.unbuilt = unbuilt_entries(run.tree, request, left_out_kernels);
  // A kernel that did not compile is still in the suites (the build read its folder whole): its
  // entries are the unbuilt ones alone, so no process is ever asked to load its library.
  std::set<std::pair<std::string, std::string>> left_out;
  for (const Entry& entry : run.unbuilt) left_out.insert({entry.op, entry.backend});
  std::erase_if(run.entries, [&](const Entry& entry) {
    return entry.backend_facts.kind == "kernel" && left_out.count({entry.op, entry.backend});
  });
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

void run_correctness_phase(Run& run) {
  const RunPlan& request = run.request;
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
  run.phase = "correctness";
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
  if (ctest_status != 0 && ctest_status != 8 && interrupting_signal() == 0) {
    std::cerr << ctest_command.front() << " ended with status " << ctest_status << " (log: " << ctest_options.log_path << ")\n";
  }
  gather_slurm_outputs(request, job_entries, ctest_options.log_path, run.staging.path() + "/junit.xml");
  files::remove_tree(job_entries);
  files::remove_tree(job_packs);
  std::map<std::string, std::string> unreadable;
  const std::vector<Verdict> written = read_phase_verdicts(verdict_files, unreadable);
  run.verdicts = collect(run.entries, written, Job::Mode::kCheck, run.salt, "logs/ctest.log", unreadable, interrupting_signal());
  // The next run is planned by what these cases took (a case that never ran measured nothing).
  costs.learn(run.verdicts);
  try {
    costs.write(costs_path);
  } catch (const std::exception& error) {
    std::cerr << "backendbench: warning: the cases' times were not kept for the next run: " << error.what() << "\n";
  }
  for (Verdict& verdict : collect(run.unbuilt, {}, Job::Mode::kCheck, run.salt, "")) run.verdicts.push_back(std::move(verdict));
}

void run_timing_phase(Run& run) {
  if (interrupting_signal() != 0) return;
  run.phase = "timing";
  const RunPlan& request = run.request;
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
  if (bench_status != 0 && bench_status != 8 && interrupting_signal() == 0) {
    std::cerr << bench_command.front() << " (timing) ended with status " << bench_status << " (log: " << bench_options.log_path << ")\n";
  }
  gather_slurm_outputs(request, timing_entries, bench_options.log_path, "");
  std::map<std::string, std::string> timed_unreadable;
  const std::vector<Verdict> timed_written = read_phase_verdicts(bench_verdicts, timed_unreadable);
  for (Verdict& verdict :
       collect(timed_entries, timed_written, Job::Mode::kTime, run.salt, "logs/bench.log", timed_unreadable, interrupting_signal())) {
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

nlohmann::json run_json(const Run& run) {
  const RunPlan& request = run.request;
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
  // A run stopped from outside: by which signal, in which phase (its cases not judged: skipped).
  described["interrupted"] = nullptr;
  if (const int signal_number = interrupting_signal()) {
    described["interrupted"] = {{"signal", signal_name(signal_number)}, {"phase", run.phase}};
  }
  // The kernels that did not compile (findings.h's reproduce_command: how to see why again).
  described["kernels_not_compiled"] = nlohmann::json::array();
  for (const auto& [source, message] : run.broken) described["kernels_not_compiled"].push_back(source);
  described["kernel_problems"] = kernel_problems_json(run.problems);
  described["scores"] = group_scores(run.verdicts, described, request.p);
  return described;
}

void write_results(Run& run, const nlohmann::json& described) {
  std::string lines;
  for (const Verdict& verdict : run.verdicts) lines += verdict_json(verdict) + "\n";
  write_whole(run.staging.path() + "/verdicts.jsonl", lines);
  write_original_files(run.staging.path(), original_files(run.verdicts, run.command_line, run.request.p, backend_names(described)));
  write_whole(run.staging.path() + "/run.json", json_text::dump(described, 1) + "\n");
  write_whole(run.staging.path() + "/report.html",
              report_html(report_data(run.verdicts, described), run.where.templates_directory, read_text(run.where.plotly_js_path)));
  for (const char* log : {"configure.log", "build.log", "ctest.log", "bench.log"}) {
    if (exists(run.logs + "/" + log)) write_whole(run.staging.path() + "/logs/" + log, read_text(run.logs + "/" + log));
  }
  run.staging.move_to(run.request.out);
}

int report_run(const Run& run, const nlohmann::json& described) {
  print_scores(run.verdicts, described);
  if (described.contains("generation")) print_generation(described["generation"]);
  if (!run.problems.empty()) {
    std::cout << "\nkernel folder problems (" << run.problems.size() << ", also in run.json and the report):\n";
    for (const model::KernelProblem& problem : run.problems) std::cout << "  " << problem.diagnostic.str() << "\n";
  }
  std::cout << "\nresults: " << run.request.out << "\nreport:  " << run.request.out << "/report.html\n";
  if (const int signal_number = interrupting_signal()) {
    size_t not_run = 0;
    for (const Verdict& verdict : run.verdicts) not_run += verdict.skip_reason == not_run_reason(signal_number);
    std::cout << "interrupted (" << signal_name(signal_number) << ") during " << run.phase << ": the results hold what was judged first; "
              << not_run << " of " << run.verdicts.size() << " verdicts are cases not run (skipped)"
              << (run.phase == "correctness" && !run.request.timed_suites.empty() ? ", and nothing was timed" : "") << "\n";
    return kInterruptedStatus;
  }
  if (!run.problems.empty()) return 1;
  for (const Verdict& verdict : run.verdicts) {
    if (verdict.status == Verdict::Status::kFailed) return 1;
  }
  return 0;
}

}  // namespace backendbench::planner
