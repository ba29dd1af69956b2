// backendbench: the one command over the harness (run, new, ops, report, compare). Only the
// command line lives here; the subcommands are plain functions in commands.cpp. In the command's
// library, not its main.cpp, so that it compiles in the library's unity file (what both include,
// nlohmann-json and the agents' headers, parsed once).
#include "cli/command_line.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/watch.h"

namespace {

const char* kRunExamples = R"(
Examples:
  backendbench run --suite smoke,edge --backend aten,directory
      every kernel in generated_kernels/ and the aten reference on the smoke and edge suites
  backendbench run --suite torchbench --backend directory --ops relu,add.Tensor --topn 5
      the 5 largest TorchBench inputs of two operators, timed (--traces DIR if not found)
  backendbench run --suite my_traces.txt --backend path/to/kernels --device cuda
      a trace file of your own against a kernel folder of your own, on the GPU
  backendbench run --suite smoke --backend directory --ops relu --watch
      then every save of a relu kernel: its verdict in about 1.5 s, then built, checked and timed again (Ctrl-C stops)
  backendbench --suite smoke --backend aten
      BackendBench's own spelling (run is the default subcommand)
  ANTHROPIC_API_KEY=... backendbench run --suite smoke,edge --backend llm --ops relu,add --record cassette
      Claude writes a C++ kernel per operator (5 rounds, failures fed back), then the run scores
      them on fresh draws and every case; --replay cassette repeats it offline

Each run writes a results folder (--out; default backendbench_output_<time>): BackendBench's
full_results.json, operator_summary.csv, failed_tests.json and OVERALL_SUMMARY.md, plus
verdicts.jsonl, junit.xml, benchmark.json, run.json (command, versions, salt, scores),
report.html and logs/. Exit status: 0 every case passed, 1 some failed, 2 bad arguments,
3 the build failed, 130 interrupted (Ctrl-C or SIGTERM after the build: the results so far are
written, the cases not run skipped).)";

const char* kRewardExamples = R"(
Examples:
  echo '{"id": 1, "op": "relu", "source": "#include <ATen/ATen.h>\nat::Tensor relu_kernel_impl(const at::Tensor& self) { return self.clamp_min(0); }\n"}' \
    | backendbench reward --suite smoke,edge --device cpu
      one reward per line: {"id": "1", "outcome": "passed", "correct": true, "speedup": ..., ...}

Each line in: {"id": ..., "op": "relu" | "add.Tensor" | ..., "language": "cpp" | "cuda" | "python",
"source": "<the kernel file>"}. Each line out, as each is ready (not in input order): id, op,
outcome (passed, failed, build_failed, error), correct, reason, failed_case, build_errors,
passed/failed/skipped, speedup with speedup_low/speedup_high (95 % interval), timed_cases, flags,
seconds. Candidates are built and run sandboxed; python/backendbench/reward.py drives it from Python.)";

const char* kTopExamples = R"(
Start here:
  backendbench new relu            a kernel file for relu.default with its exact signature
  backendbench run --suite smoke,edge --backend directory --ops relu
  backendbench ops --suite smoke   which operators a suite has, and which have kernels
  backendbench compare OLD NEW     what got slower, faster, broken or fixed (and NEW/compare.html))";

// `backendbench --suite smoke ...` (BackendBench's spelling) means `backendbench run --suite smoke ...`.
std::vector<std::string> arguments_of(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  const bool option_first = !arguments.empty() && arguments[0].rfind("-", 0) == 0 && arguments[0] != "--help" &&
                            arguments[0] != "-h";
  if (option_first) arguments.insert(arguments.begin(), "run");
  std::reverse(arguments.begin(), arguments.end());  // CLI11 parses a reversed vector
  return arguments;
}

std::string command_line(int argc, char** argv) {
  std::string text = "backendbench";
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const bool plain = argument.find_first_of(" '\"$`\\") == std::string::npos && !argument.empty();
    text += " " + (plain ? argument : "'" + argument + "'");
  }
  return text;
}

}  // namespace

int backendbench::cli::command_line_main(int argc, char** argv) {
  using namespace backendbench::cli;
  CLI::App app{"backendbench: is a kernel correct, and how fast is it on real model shapes?", "backendbench"};
  app.footer(kTopExamples);
  app.require_subcommand(1);

  RunArguments run;
  bool timing = false, no_timing = false;
  auto* run_command_line = app.add_subcommand("run", "check and time kernels on suites; print scores; write a results folder");
  run_command_line->footer(kRunExamples);
  run_command_line->add_option("--suite", run.suite,
                               "smoke, edge, opinfo, facto, torchbench, sample, or a trace file or folder (.txt, .json, .jsonl); "
                               "comma-separated")->capture_default_str();
  run_command_line->add_option("--backend", run.backend,
                               "aten (the reference), directory (generated_kernels/), a kernel folder, flag_gems, torch_decomp, "
                               "or llm / kernel_agent (a model writes the kernels); comma-separated")
      ->capture_default_str();
  run_command_line->add_option("--ops", run.ops, "operators, comma-separated: base names (relu, add) or overloads (add.Tensor)");
  run_command_line->add_option("--topn,--topn-inputs", run.topn, "the N largest inputs per operator (torchbench, trace files)");
  run_command_line->add_option("--device", run.device, "cpu or cuda (default: cuda when available)");
  run_command_line->add_flag("--timing", timing, "time every case with ./bench (default for smoke, torchbench and trace files)");
  run_command_line->add_flag("--no-timing", no_timing, "correctness only (default for edge, opinfo and facto)");
  bool no_sandbox = false;
  run_command_line->add_flag("--no-sandbox", no_sandbox,
                             "run kernel workers without the bubblewrap sandbox (machines without user namespaces); "
                             "run.json and the console say so");
  bool kernels_must_compute = false;
  run_command_line->add_flag("--kernels-must-compute", kernels_must_compute,
                             "fail a kernel that has ATen's computing operators do its work (calls high-level PyTorch); "
                             "off, every verdict still records that share (aten_share), shown in the report");
  run_command_line->add_option("--p", run.p, "perf@p threshold")->capture_default_str();
  run_command_line->add_option("-j,--jobs", run.jobs, "parallel build jobs and CTest entries (default: the cores)");
  run_command_line->add_option("--gpu-slots", run.gpu_slots,
                               "correctness entries at once on each GPU (default " + std::to_string(kDefaultGpuSlots) +
                                   "); timing takes a GPU alone");
  const char* slurm_group = "Many hosts (docs/ctest.md: Many hosts, with Slurm)";
  run_command_line->add_flag("--slurm", run.slurm, "run the entries as Slurm array tasks (sbatch --wait); the build folder must be "
                                                   "on a file system every node shares, at the same path")->group(slurm_group);
  run_command_line->add_option("--slurm-tasks", run.slurm_tasks, "array tasks, each running its share of the entries (default 4)")
      ->group(slurm_group);
  run_command_line->add_option("--slurm-gpus", run.slurm_gpus, "GPUs per task, --gres=gpu:<n> (default 1 with --device cuda, else 0)")
      ->group(slurm_group);
  run_command_line->add_option("--slurm-args", run.slurm_args, "more sbatch arguments, e.g. '--partition=gpu --time=1:00:00'")
      ->group(slurm_group);
  run_command_line->add_option("--cases-per-entry", run.cases_per_entry,
                               "split an operator with more cases into entries of at most this many, and pack "
                               "smaller jobs together up to it (default: the build's BACKENDBENCH_CASES_PER_ENTRY; 0: never split)");
  bool one_job_per_entry = false;
  run_command_line->add_flag("--one-job-per-entry", one_job_per_entry,
                             "one CTest entry per operator and backend (or part), named after it, instead of small jobs packed together");
  bool process_per_entry = false;
  run_command_line->add_flag("--process-per-entry", process_per_entry,
                             "each correctness entry starts its own test executable (libtorch, CUDA) instead of handing "
                             "its job to one of the supervisors the run keeps for the phase, one per GPU slot");
  bool watch = false;
  run_command_line->add_flag("--watch", watch,
                             "after the run, watch the kernel folder: each saved kernel gets a quick verdict (the file "
                             "alone, served), then its operator is built, checked and timed again, its verdict and speedup "
                             "printed (Ctrl-C stops)");
  run_command_line->add_option("--out,--log-dir", run.out, "results folder (default backendbench_output_<time>)");
  run_command_line->add_option("--build", run.build, "build folder to configure and reuse (default: this command's own)");
  run_command_line->add_option("--traces", run.traces, "TorchBench's traces folder (default: the build's, or ../shared/traces/torchbench)");
  run_command_line->add_option("--salt", run.salt, "input draw salt, to repeat a run's draws (run.json has each run's)");
  // The generating backends (llm, kernel_agent): a model writes the kernels, then the run scores them.
  const char* model_group = "Model-written kernels (--backend llm or kernel_agent)";
  auto model_option = [&](const char* names, std::string& value, const char* help) {
    run_command_line->add_option(names, value, help)->group(model_group);
  };
  model_option("--llm-api", run.llm_api, "anthropic (Messages API; ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY) or openai "
                                         "(chat completions: OpenAI, relays, local servers; OPENAI_BASE_URL, OPENAI_API_KEY); default anthropic");
  model_option("--model,--llm-model", run.model, "model name (default claude-sonnet-4-20250514 for anthropic)");
  model_option("--rounds,--llm-attempts,--kernel-agent-max-rounds", run.rounds, "candidates per worker and operator (llm 5, kernel_agent 10)");
  model_option("--workers,--kernel-agent-workers", run.workers, "independent chains per operator (llm 1, kernel_agent 4)");
  model_option("--concurrency", run.concurrency, "chains at once across operators (default: 4, or --workers if more)");
  model_option("--select", run.select, "first: the first correct kernel wins (kernel_agent); best: every round runs, the best is kept (llm)");
  model_option("--budget-tokens", run.budget_tokens, "stop asking once this many tokens (input + output) are spent");
  model_option("--budget-usd", run.budget_usd, "stop asking once this many US dollars are spent (needs known prices or --prices)");
  model_option("--prices", run.prices, "INPUT,OUTPUT US dollars per million tokens (known for claude-sonnet-4: 3,15)");
  model_option("--language", run.language, "kernel language: cpp (default without --device cuda), cuda (default with it), python (triton)");
  model_option("--temperature", run.temperature, "sampling temperature (default 0.2)");
  model_option("--max-tokens", run.max_tokens, "longest answer, tokens (default 8000)");
  model_option("--llm-timeout", run.llm_timeout, "seconds one request may take (default 120)");
  model_option("--llm-retries", run.llm_retries, "retries of a rate-limited, overloaded, failed or timed-out request (default 3)");
  model_option("--record", run.record, "save every model answer into this folder (a cassette), to replay the run");
  model_option("--replay", run.replay, "answer from a cassette written by --record: no key, no network, the same verdicts");

  RewardArguments reward;
  bool reward_timing = false, reward_no_timing = false, reward_no_sandbox = false;
  auto* reward_command_line = app.add_subcommand(
      "reward", "score kernel sources for a training loop: one candidate per line in, one reward per line out (JSON)");
  reward_command_line->footer(kRewardExamples);
  reward_command_line->add_option("--suite", reward.suite, "the suites whose cases score a candidate, as for run")->capture_default_str();
  reward_command_line->add_option("--cases", reward.cases,
                                  "holdout: every case with the salt; feedback: every second case with a salt derived from it")
      ->capture_default_str();
  reward_command_line->add_option("--device", reward.device, "cpu or cuda (default: cuda when available)");
  reward_command_line->add_flag("--timing", reward_timing, "time correct candidates (default for smoke, torchbench and trace files)");
  reward_command_line->add_flag("--no-timing", reward_no_timing, "correctness only");
  reward_command_line->add_option("--concurrency", reward.concurrency, "candidates built and checked at once")->capture_default_str();
  reward_command_line->add_option("--salt", reward.salt, "input draw salt (default: random; printed at start)");
  reward_command_line->add_option("--topn", reward.topn, "the N largest inputs per operator (torchbench, trace files)");
  reward_command_line->add_option("--traces", reward.traces, "TorchBench's traces folder");
  reward_command_line->add_option("--build", reward.build, "build folder (default: this command's own)");
  reward_command_line->add_option("--work", reward.work, "where candidates are built (default: <build>/backendbench_reward)");
  reward_command_line->add_flag("--keep-attempts", reward.keep_attempts, "keep each candidate's folder (kernel, build log, verdicts)");
  reward_command_line->add_flag("--no-sandbox", reward_no_sandbox, "build and run candidates without the bubblewrap sandbox");

  std::string new_op, new_kernels;
  bool new_cuda = false;
  auto* new_command_line = app.add_subcommand("new", "scaffold generated_kernels/<op>/<op>_implementation_<N>.cpp with the exact signature");
  new_command_line->add_option("operator", new_op, "relu, add.Tensor, aten.mul.Tensor, ...")->required();
  new_command_line->add_flag("--cuda", new_cuda, "a .cu kernel (built where nvcc and a CUDA libtorch are found)");
  new_command_line->add_option("--kernels", new_kernels, "kernel folder (default: generated_kernels/)");

  OpsRequest ops;
  auto* ops_command_line = app.add_subcommand("ops", "list a suite's operators, their case counts, and their kernels");
  ops_command_line->add_option("--suite", ops.suite, "as for run (one suite)")->capture_default_str();
  ops_command_line->add_option("--kernels", ops.kernels, "kernel folder (default: generated_kernels/)");
  ops_command_line->add_option("--traces", ops.traces, "TorchBench's traces folder");
  ops_command_line->add_option("--build", ops.build, "build folder (default: this command's own)");

  int gpu_slots = kDefaultGpuSlots;
  std::string gpus_out;
  auto* gpus_command_line = app.add_subcommand(
      "gpus", "write CTest's resource spec for this machine's GPUs (ctest --resource-spec-file), as run does");
  gpus_command_line->add_option("--slots", gpu_slots, "correctness entries at once on each GPU")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  gpus_command_line->add_option("--out", gpus_out, "file to write (default: standard output)");

  std::vector<std::string> report_directories;
  std::string report_page;
  auto* report_command_line = app.add_subcommand(
      "report", "print a results folder's scores and write its report.html again; several folders: one page over them all");
  report_command_line->add_option("folders", report_directories, "results folders of backendbench run (one per GPU model, say)")
      ->required();
  report_command_line->add_option("--html", report_page,
                                  "where the page goes (default: FOLDER/report.html; for several folders, backendbench_report.html here)");

  std::string before, after;
  double threshold = 0.10;
  bool fail_on_regression = false;
  auto* compare_command_line =
      app.add_subcommand("compare", "regressions and improvements between two results folders, per operator and case");
  compare_command_line->add_option("A", before, "the earlier results folder")->required();
  compare_command_line->add_option("B", after, "the later results folder")->required();
  compare_command_line->add_option("--threshold", threshold, "a speedup change beyond this fraction counts")
      ->capture_default_str()->check(CLI::Range(0.0, 10.0));
  compare_command_line->add_flag("--fail-on-regression", fail_on_regression, "exit 1 when B regressed (for CI)");
  std::string compare_html;
  compare_command_line->add_option("--html", compare_html, "where the comparison's HTML page goes (default: B/compare.html)");

  try {
    std::vector<std::string> arguments = arguments_of(argc, argv);
    app.parse(arguments);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    std::string where = "backendbench";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    std::string message = error.what();  // CLI11's, in the project's form: lowercase, then what is expected
    if (!message.empty()) message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    std::cerr << where << ": error: " << message << "; expected the form `" << where << " --help` shows\n";
    return 2;
  }
  try {
    if (*run_command_line) {
      if (timing && no_timing) throw CliError("--timing", "both --timing and --no-timing given", "one of them");
      if (timing || no_timing) run.timing = timing;
      RunRequest request = check_run_arguments(run, run_context(installation()), operator_known);
      request.sandbox = !no_sandbox;
      request.kernels_must_compute = kernels_must_compute;
      request.pack_small_jobs = !one_job_per_entry;
      request.entry_servers = !process_per_entry;
      return watch ? watch_command(request, command_line(argc, argv)) : run_command(request, command_line(argc, argv));
    }
    if (*reward_command_line) {
      if (reward_timing && reward_no_timing) throw CliError("--timing", "both --timing and --no-timing given", "one of them");
      if (reward_timing || reward_no_timing) reward.timing = reward_timing;
      reward.sandbox = !reward_no_sandbox;
      return reward_command(reward);
    }
    if (*new_command_line) return new_command(new_op, new_cuda, new_kernels);
    if (*ops_command_line) return ops_command(ops);
    if (*gpus_command_line) return gpus_command(gpu_slots, gpus_out);
    if (*report_command_line) return report_command(report_directories, report_page);
    if (*compare_command_line) return compare_command(before, after, threshold, fail_on_regression, compare_html);
  } catch (const backendbench::DiagnosticError& error) {
    std::cerr << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    const std::string message = error.what();  // located already, or given a location here
    std::cerr << (message.find(": error: ") != std::string::npos ? "" : "backendbench: error: ") << message << "\n";
    return 2;
  }
  return 0;
}
