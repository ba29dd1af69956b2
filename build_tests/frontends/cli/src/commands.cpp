// The backendbench command's subcommands; see commands.h. `run` is the planner's phases in order
// (planner/run.h), a generating backend's phase among them; the others are front-ends over the
// planner, the agents' reward service and the generator.
#include "cli/commands.h"

#if __has_include(<torch/headeronly/version.h>)
#include <torch/headeronly/version.h>
#else
#include <torch/version.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "agents/reward.h"
#include "agents/scaffold.h"
#include "backendbench/files.h"
#include "backendbench/gpu_slot.h"
#include "language/json_text.h"
#include "planner/results_folder.h"
#include "backendbench/settings.h"
#include "backendbench/verdict.h"
#include "cli/errors.h"
#include "cli/generation_phase.h"
#include "language/naming.h"
#include "planner/build_steps.h"
#include "planner/compare.h"
#include "planner/process.h"
#include "planner/report.h"
#include "planner/results.h"
#include "planner/run.h"
#include "planner/submit.h"
#include "planner/text.h"
#include "schema/torch_schema.h"

namespace backendbench::cli {
namespace {

using files::write_whole;

std::string regex_escape(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) escaped += '\\';
    escaped += c;
  }
  return escaped;
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
  for (const naming::OperatorName& op : schema::TorchSchemaSource().names()) {
    if (op.schema_name() == name->schema_name()) return true;  // a base name with overloads, none of them the default
  }
  return false;
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

// A run's phases, in order: what it is, the kernel folder's problems left out, the build tree
// configured, kernels generated (a generating backend), the GPUs and processes planned, served
// supervisors started beside the build, the build, the entries planned, correctness, timing, the
// results folder, the report.
int run_command(const RunRequest& given, const std::string& command_line) {
  RunRequest request = given;
  replay_recorded_salt(request);
  planner::Run run(request, command_line);
  announce_run(run);
  if (request.generation) record_cassette(*request.generation, run.salt, command_line);
  leave_out_kernel_folder_problems(run);
  configure_run_tree(run);
  std::optional<GenerationPhase> generation;
  if (request.generation && !(generation = generate_kernels_phase(run, request))) return 3;
  plan_gpus_and_processes(run);
  start_servers_before_the_build(run);
  if (!build_targets(run)) return 3;
  plan_entries(run);
  // From here a stop from outside keeps what was judged (planner/interruption.h).
  const planner::InterruptWatch interrupts;
  run_correctness_phase(run);
  if (!run.request.timed_suites.empty()) run_timing_phase(run);
  nlohmann::json described = run_json(run);
  if (generation) described["generation"] = generation_run_json(*request.generation, *generation, run.salt, run.verdicts);
  write_results(run, described);
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
            const nlohmann::json item = json_text::parse_or_discarded(line);
            if (item.is_object() && item.contains("id") && (item["id"].is_string() || item["id"].is_number_integer())) {
              unreadable.id = item["id"].is_string() ? item["id"].get<std::string>() : std::to_string(item["id"].get<int64_t>());
            }
            return unreadable;
          }
        }
        return std::nullopt;
      },
      [&](const Reward& reward) { std::cout << json_text::dump(reward_json(reward)) << "\n" << std::flush; });
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
    results.run = json_text::parse(read_text(directory + "/run.json"));
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
