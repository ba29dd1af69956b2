// Unit tests of the backendbench command's library (build_tests/frontends/cli): argument checks
// (one test per diagnostic), progress, compare, scaffolding, the report's data and page, and the
// suite manifest reader. The command run end to end is tested by cli_end_to_end.py.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "backendbench/results_folder.h"
#include "build_service/build_tree.h"
#include "cli/compare.h"
#include "cli/entry_costs.h"
#include "cli/entry_packs.h"
#include "cli/errors.h"
#include "cli/findings.h"
#include "build_service/process.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/run_request.h"
#include "cli/tree_selection.h"
#include "cli/watch.h"
#include "agents/scaffold.h"
#include "schema/torch_schema.h"

namespace backendbench::cli {
namespace {

class Scratch {
 public:
  Scratch() : path_(files::temporary_directory() + "/backendbench_cli_test_" + std::to_string(getpid())) {
    files::remove_tree(path_);
    files::make_directories(path_);
  }
  ~Scratch() { files::remove_tree(path_); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    files::make_directories(file.substr(0, file.find_last_of('/')));
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

RunContext context_in(const Scratch& scratch) {
  RunContext context;
  context.source_directory = BACKENDBENCH_TEST_SOURCE_DIR;
  context.default_build_directory = scratch.path() + "/build";
  context.default_jobs = 2;
  context.now_stamp = "20261124_120000";
  return context;
}

bool known(const std::string& filter) { return filter == "relu" || filter == "add.Tensor" || filter == "add"; }

// The message check_run_arguments throws for `arguments`, "" when it accepts them.
std::string error_of(const RunArguments& arguments, const Scratch& scratch) {
  try {
    check_run_arguments(arguments, context_in(scratch), known);
  } catch (const DiagnosticError& error) {
    return error.what();
  }
  return "";
}

RunArguments with(std::function<void(RunArguments&)> change) {
  RunArguments arguments;
  change(arguments);
  return arguments;
}

TEST(RunArguments, DefaultsAreSmokeOnAtenTimedIntoATimestampedFolder) {
  Scratch scratch;
  char here[4096];
  ASSERT_NE(getcwd(here, sizeof(here)), nullptr);
  const RunRequest request = check_run_arguments(RunArguments{}, context_in(scratch), known);
  ASSERT_EQ(request.suites.size(), 1u);
  EXPECT_EQ(request.suites[0].name, "smoke");
  EXPECT_TRUE(request.aten);
  EXPECT_TRUE(request.kernels_directory.empty());
  EXPECT_EQ(request.timed_suites, (std::set<std::string>{"smoke"}));
  EXPECT_EQ(request.jobs, 2);
  EXPECT_EQ(request.gpu_slots, kDefaultGpuSlots);
  EXPECT_EQ(request.out, std::string(here) + "/backendbench_output_20261124_120000");
  EXPECT_FALSE(request.salt_given);
}

TEST(RunArguments, ListsKernelFoldersTimingAndFileSuites) {
  Scratch scratch;
  const std::string traces = scratch.write("my-model.txt", "Operator: aten.relu.default\ncnt: 1, ((T([4], f32),), {})\n");
  scratch.write("kernels/relu/relu_implementation_1.cpp", "");
  const RunRequest request = check_run_arguments(with([&](RunArguments& a) {
                                                   a.suite = "edge, " + traces;
                                                   a.backend = "aten," + scratch.path() + "/kernels";
                                                   a.ops = "relu,add.Tensor";
                                                   a.topn = "3";
                                                   a.salt = "0x10";
                                                 }),
                                                 context_in(scratch), known);
  ASSERT_EQ(request.suites.size(), 2u);
  EXPECT_FALSE(request.suites[0].timed_by_default);  // edge
  EXPECT_EQ(request.suites[1].name, "my_model");
  EXPECT_EQ(request.suites[1].traces, traces);
  EXPECT_EQ(request.timed_suites, (std::set<std::string>{"my_model"}));  // trace files are timed by default, edge is not
  EXPECT_EQ(request.kernels_directory, scratch.path() + "/kernels");
  EXPECT_EQ(request.ops, (std::vector<std::string>{"relu", "add.Tensor"}));
  EXPECT_EQ(request.topn, 3);
  EXPECT_EQ(request.salt, 16u);
  EXPECT_TRUE(check_run_arguments(with([](RunArguments& a) { a.suite = "edge"; }), context_in(scratch), known).timed_suites.empty());
  EXPECT_TRUE(check_run_arguments(with([](RunArguments& a) { a.timing = false; }), context_in(scratch), known).timed_suites.empty());
  EXPECT_EQ(check_run_arguments(with([](RunArguments& a) { a.suite = "smoke,edge"; a.timing = true; }), context_in(scratch), known)
                .timed_suites.size(), 2u);
  EXPECT_EQ(check_run_arguments(with([](RunArguments& a) { a.backend = "directory"; }), context_in(scratch), known)
                .kernels_directory,
            std::string(BACKENDBENCH_TEST_SOURCE_DIR) + "/generated_kernels");
}

TEST(RunArguments, UnknownSuite) {
  Scratch scratch;
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.suite = "smok"; }), scratch),
            "--suite: error: unknown suite 'smok'; expected smoke, edge, opinfo, facto, torchbench, sample, or a trace file or "
            "folder of them (.txt, .json, .jsonl), comma-separated");
}

TEST(RunArguments, MissingTraceFile) {
  Scratch scratch;
  EXPECT_NE(error_of(with([](RunArguments& a) { a.suite = "nowhere/traces.txt"; }), scratch)
                .find("--suite: error: trace file or folder 'nowhere/traces.txt' does not exist; expected"),
            std::string::npos);
}

TEST(RunArguments, TraceFileNamedLikeABuiltinSuite) {
  Scratch scratch;
  const std::string traces = scratch.write("smoke.txt", "");
  EXPECT_NE(error_of(with([&](RunArguments& a) { a.suite = traces; }), scratch)
                .find("would be named like the built-in suite 'smoke'"),
            std::string::npos);
}

TEST(RunArguments, UnknownBackend) {
  Scratch scratch;
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.backend = "tritn"; }), scratch),
            "--backend: error: unknown backend 'tritn'; expected aten, directory (generated_kernels/), a kernel "
            "folder (<op>/<op>_implementation_<N>.cpp|.cu|.py), an op library (flag_gems, torch_decomp), or a model "
            "writing the kernels (llm, kernel_agent), comma-separated");
}

RunContext context_with_key(const Scratch& scratch) {
  RunContext context = context_in(scratch);
  context.getenv = [](const char* name) -> const char* { return std::string(name) == "ANTHROPIC_API_KEY" ? "sk-test" : nullptr; };
  return context;
}

TEST(RunArguments, LlmIsBackendBenchsLoopAndKernelAgentKernelAgents) {
  Scratch scratch;
  const RunRequest llm = check_run_arguments(with([](RunArguments& a) { a.backend = "aten,llm"; }), context_with_key(scratch), known);
  ASSERT_TRUE(llm.generation);
  EXPECT_TRUE(llm.aten);
  EXPECT_EQ(llm.kernels_label, "llm");
  EXPECT_EQ(llm.generation->limits.rounds, 5);
  EXPECT_EQ(llm.generation->limits.workers, 1);
  EXPECT_FALSE(llm.generation->limits.first_correct_wins);
  EXPECT_EQ(llm.generation->language, KernelLanguage::kCpp);
  EXPECT_EQ(llm.generation->model.model, "claude-sonnet-4-20250514");
  EXPECT_EQ(llm.generation->model.base_url, "https://api.anthropic.com");
  EXPECT_EQ(llm.generation->limits.usd_per_million_output, 15.0);
  const RunRequest agent = check_run_arguments(with([](RunArguments& a) { a.backend = "kernel_agent"; a.concurrency = "6"; }),
                                               context_with_key(scratch), known);
  EXPECT_EQ(agent.generation->limits.rounds, 10);
  EXPECT_EQ(agent.generation->limits.workers, 4);
  EXPECT_EQ(agent.generation->limits.concurrency, 6);
  EXPECT_TRUE(agent.generation->limits.first_correct_wins);
}

TEST(RunArguments, LlmWithoutAKeyNamesTheVariable) {
  Scratch scratch;
  RunContext context = context_in(scratch);
  context.getenv = [](const char*) -> const char* { return nullptr; };
  try {
    check_run_arguments(with([](RunArguments& a) { a.backend = "llm"; }), context, known);
    ADD_FAILURE() << "accepted without a key";
  } catch (const DiagnosticError& error) {
    EXPECT_EQ(std::string(error.what()),
              "--backend: error: llm needs ANTHROPIC_API_KEY in the environment (https://api.anthropic.com); expected a key in "
              "ANTHROPIC_API_KEY, a server on loopback (ANTHROPIC_BASE_URL), or --replay DIR");
  }
  context.getenv = [](const char* name) -> const char* {
    return std::string(name) == "OPENAI_BASE_URL" ? "http://127.0.0.1:8000/v1" : nullptr;
  };
  const RunRequest local = check_run_arguments(with([](RunArguments& a) { a.backend = "llm"; a.llm_api = "openai"; a.model = "qwen"; }),
                                               context, known);
  EXPECT_EQ(local.generation->model.base_url, "http://127.0.0.1:8000/v1");  // a local server needs no key
}

TEST(Process, AProcessPastItsTimeoutIsStoppedAndSaysSo) {
  Scratch scratch;
  ProcessOptions options;
  options.log_path = scratch.path() + "/sleep.log";
  options.timeout_seconds = 0.3;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_process({"sleep", "30"}, options), kProcessTimedOut);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_NE(tail_of_file(options.log_path, 2).find("sleep ran longer than 0.3 s and was stopped"), std::string::npos);
  options.timeout_seconds = 30;
  EXPECT_EQ(run_process({"true"}, options), 0);  // within its limit: its own status
}

TEST(RunArguments, OpLibrariesAreBackends) {
  Scratch scratch;
  const RunRequest request =
      check_run_arguments(with([](RunArguments& a) { a.backend = "aten,flag_gems,directory"; }), context_in(scratch), known);
  EXPECT_TRUE(request.aten);
  EXPECT_EQ(request.op_libraries, std::vector<std::string>{"flag_gems"});
  EXPECT_EQ(request.kernels_label, "directory");
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.backend = "flag_gems,flag_gems"; }), scratch),
            "--backend: error: op library 'flag_gems' given twice; expected each backend once");
}

TEST(RunArguments, TheOpLibrariesAreThoseOfThePythonPackage) {
  // kOpLibraries mirrors python/backendbench/op_libraries.py's LIBRARIES: each name there, and no other.
  std::ifstream in(std::string(BACKENDBENCH_TEST_SOURCE_DIR) + "/python/backendbench/op_libraries.py");
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t registered = 0;
  for (size_t at = source.find("\": OpLibrary("); at != std::string::npos; at = source.find("\": OpLibrary(", at + 1)) {
    const size_t start = source.rfind('"', at - 1) + 1;
    const std::string name = source.substr(start, at - start);
    EXPECT_NE(std::find(kOpLibraries.begin(), kOpLibraries.end(), name), kOpLibraries.end()) << name;
    ++registered;
  }
  EXPECT_EQ(registered, kOpLibraries.size());
}

TEST(RunArguments, MissingKernelFolder) {
  Scratch scratch;
  EXPECT_NE(error_of(with([](RunArguments& a) { a.backend = "my_kernels/"; }), scratch)
                .find("--backend: error: kernel folder 'my_kernels/' does not exist; expected"),
            std::string::npos);
}

TEST(RunArguments, TwoKernelFolders) {
  Scratch scratch;
  files::make_directories(scratch.path() + "/k");
  EXPECT_NE(error_of(with([&](RunArguments& a) { a.backend = "directory," + scratch.path() + "/k"; }), scratch)
                .find("--backend: error: two kernel folders"),
            std::string::npos);
}

TEST(RunArguments, UnknownOperator) {
  Scratch scratch;
  EXPECT_NE(error_of(with([](RunArguments& a) { a.ops = "relu,frobnicate"; }), scratch)
                .find("--ops: error: unknown operator 'frobnicate'; expected ATen operators"),
            std::string::npos);
}

TEST(RunArguments, TopnThatIsNotANumber) {
  Scratch scratch;
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.topn = "five"; }), scratch),
            "--topn: error: 'five' is not a number of inputs; expected a whole number of at least 1");
  EXPECT_NE(error_of(with([](RunArguments& a) { a.topn = "0"; }), scratch).find("'0' is not a number of inputs"),
            std::string::npos);
}

TEST(RunArguments, TopnWithoutTorchbench) {
  Scratch scratch;
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.topn = "2"; }), scratch),
            "--topn: error: --topn keeps the largest inputs of TorchBench traces; expected --topn with --suite "
            "torchbench or a trace file");
}

TEST(RunArguments, TorchbenchWithoutTraces) {
  Scratch scratch;
  EXPECT_NE(error_of(with([](RunArguments& a) { a.suite = "torchbench"; }), scratch)
                .find("--traces: error: no TorchBench traces found; expected the folder of TorchBench's operator traces"),
            std::string::npos);
}

TEST(RunArguments, UnknownDevice) {
  Scratch scratch;
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.device = "tpu"; }), scratch),
            "--device: error: unknown device 'tpu'; expected cpu or cuda");
}

TEST(RunArguments, CudaWithoutAGpu) {
  Scratch scratch;
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.device = "cuda"; }), scratch),
            "--device: error: no CUDA device on this machine; expected cpu here, or cuda on a machine with a GPU");
  RunContext context = context_in(scratch);
  context.cuda_available = true;
  EXPECT_EQ(check_run_arguments(with([](RunArguments& a) { a.device = "cuda"; }), context, known).device, "cuda");
}

TEST(RunArguments, BadThresholdJobsAndSalt) {
  Scratch scratch;
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.p = "fast"; }), scratch),
            "--p: error: 'fast' is not a speedup threshold; expected a number of at least 0, e.g. 1.5");
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.jobs = "0"; }), scratch),
            "-j: error: '0' is not a number of jobs; expected a whole number of at least 1");
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.gpu_slots = "all"; }), scratch),
            "--gpu-slots: error: 'all' is not a number of entries per GPU; expected a whole number from 1 to 1024");
  Scratch given;
  EXPECT_EQ(check_run_arguments(with([](RunArguments& a) { a.gpu_slots = "6"; }), context_in(given), known).gpu_slots, 6);
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.cases_per_entry = "-1"; }), scratch),
            "--cases-per-entry: error: '-1' is not a number of cases; expected a whole number, 0 for one entry per operator");
}

TEST(RunArguments, SlurmOptions) {
  Scratch scratch;
  const auto slurm = [](std::function<void(RunArguments&)> more) {
    return with([more](RunArguments& a) {
      a.slurm = true;
      more(a);
    });
  };
  RunContext context = context_in(scratch);
  context.on_path = [](const std::string& program) { return program == "sbatch"; };
  const RunRequest request = check_run_arguments(slurm([](RunArguments& a) {
                                                   a.slurm_tasks = "8";
                                                   a.slurm_args = "--partition=gpu  --time=1:00:00";
                                                 }),
                                                 context, known);
  ASSERT_TRUE(request.slurm);
  EXPECT_EQ(request.slurm->tasks, 8);
  EXPECT_EQ(request.slurm->gpus_per_task, 0);  // a CPU run asks for no GPU
  EXPECT_EQ(request.slurm->sbatch_arguments, (std::vector<std::string>{"--partition=gpu", "--time=1:00:00"}));
  // --device cuda on a machine without a GPU: the GPUs are the nodes'; one a task by default.
  const RunRequest cuda = check_run_arguments(slurm([](RunArguments& a) { a.device = "cuda"; }), context, known);
  EXPECT_EQ(cuda.slurm->gpus_per_task, 1);
  EXPECT_EQ(error_of(slurm([](RunArguments& a) { a.slurm_tasks = "0"; }), scratch),
            "--slurm-tasks: error: '0' is not a number of array tasks; expected a whole number from 1 to 100000");
  EXPECT_EQ(error_of(with([](RunArguments& a) { a.slurm_gpus = "2"; }), scratch),
            "--slurm-gpus: error: a Slurm option without --slurm; expected --slurm with it");
  RunContext without = context_in(scratch);
  without.on_path = [](const std::string&) { return false; };
  try {
    check_run_arguments(slurm([](RunArguments&) {}), without, known);
    ADD_FAILURE() << "no error without sbatch";
  } catch (const CliError& error) {
    EXPECT_EQ(std::string(error.what()),
              "--slurm: error: sbatch is not on PATH; expected Slurm's client commands (Debian's slurm-client) on this machine");
  }
  EXPECT_NE(error_of(with([](RunArguments& a) { a.salt = "0xZZ"; }), scratch).find("--salt: error: '0xZZ' is not a salt"),
            std::string::npos);
}

TEST(RunArguments, OutThatIsNotAResultsFolder) {
  Scratch scratch;
  scratch.write("notes/todo.txt", "mine");
  EXPECT_NE(error_of(with([&](RunArguments& a) { a.out = scratch.path() + "/notes"; }), scratch)
                .find("exists and is not a results folder of an earlier run"),
            std::string::npos);
  scratch.write("earlier/run.json", "{}");
  EXPECT_EQ(error_of(with([&](RunArguments& a) { a.out = scratch.path() + "/earlier"; }), scratch), "");
  EXPECT_NE(error_of(with([&](RunArguments& a) { a.out = scratch.path() + "/no/such/out"; }), scratch)
                .find("--out: error: the folder '" + scratch.path() + "/no/such' does not exist"),
            std::string::npos);
}

TEST(RunArguments, OperatorsNoSuiteHasAreNamed) {
  EXPECT_EQ(unmatched_filters({"relu", "mul", "add.Tensor"}, {"relu.default", "add.Tensor", "add_.Tensor"}),
            (std::vector<std::string>{"mul"}));
  EXPECT_TRUE(unmatched_filters({"add"}, {"add.Tensor"}).empty());
}

Verdict verdict_of(const std::string& case_name, bool passed, double speedup = 0, const char* frontend = "tests") {
  Verdict verdict;
  verdict.suite = "smoke";
  verdict.op = "relu.default";
  verdict.backend = "impl1";
  verdict.case_name = case_name;
  verdict.frontend = frontend;
  if (!passed) {
    verdict.status = Verdict::Status::kFailed;
    verdict.errors = {"relu.default case " + case_name + ": wrong values"};
  }
  if (speedup > 0) verdict.timing = TimingFigures{10, 10 / speedup, 10 / speedup, speedup};
  return verdict;
}

TEST(Progress, CountsWholeLinesAsTheyAreAppended) {
  Scratch scratch;
  const std::string path = scratch.path() + "/v.jsonl";
  VerdictFollower follower({path, scratch.path() + "/not_yet.jsonl"});
  EXPECT_EQ(follower.update().done, 0);
  std::ofstream out(path);
  out << verdict_json(verdict_of("a", true)) << "\n" << verdict_json(verdict_of("b", false)) << "\n{\"sch";
  out.flush();
  ProgressCounts counts = follower.update();
  EXPECT_EQ(counts.done, 2);
  EXPECT_EQ(counts.failed, 1);
  out << "ema\": 1}\n";  // the half line, completed: not a verdict, so a failure
  out.flush();
  counts = follower.update();
  EXPECT_EQ(counts.done, 3);
  EXPECT_EQ(counts.failed, 2);
}

TEST(Progress, LineEstimatesTheTimeLeftAtTheRateSoFar) {
  EXPECT_EQ(progress_line("correctness", {10, 1, 40}, 20), "correctness  10/40 cases  1 failed  0:20 elapsed  about 1:00 left");
  EXPECT_EQ(progress_line("timing", {0, 0, 5}, 3), "timing  0/5 cases  0 failed  0:03 elapsed");
  EXPECT_EQ(clock_text(3725), "1:02:05");
}

TEST(Compare, FindsBrokenFixedSlowerAndFasterCases) {
  const std::vector<Verdict> before = {verdict_of("a", true), verdict_of("b", false), verdict_of("c", true, 2.0, "bench"),
                                       verdict_of("d", true, 1.0, "bench"), verdict_of("e", true, 1.0, "bench"),
                                       verdict_of("gone", true)};
  const std::vector<Verdict> after = {verdict_of("a", false), verdict_of("b", true), verdict_of("c", true, 1.5, "bench"),
                                      verdict_of("d", true, 1.5, "bench"), verdict_of("e", true, 1.05, "bench"),
                                      verdict_of("new", true)};
  const Comparison comparison = compare_runs(before, after, 0.10);
  EXPECT_EQ(comparison.matched, 5);
  EXPECT_EQ(comparison.only_before, 1);
  EXPECT_EQ(comparison.only_after, 1);
  ASSERT_EQ(comparison.regressions.size(), 2u);  // a broke; c lost 25 %
  EXPECT_EQ(comparison.regressions[0].case_name, "a");
  EXPECT_NE(comparison.regressions[0].what.find("passed → failed: relu.default case a: wrong values"), std::string::npos);
  EXPECT_EQ(comparison.regressions[1].what, "speedup 2.000x → 1.500x (-25.0%)");
  ASSERT_EQ(comparison.improvements.size(), 2u);  // b fixed; d gained 50 %; e's 5 % is within the threshold
  EXPECT_EQ(comparison.improvements[0].case_name, "b");
  EXPECT_EQ(comparison.improvements[1].case_name, "d");
  ASSERT_EQ(comparison.rows.size(), 1u);
  EXPECT_EQ(comparison.rows[0].failed_before, 1);
  EXPECT_EQ(comparison.rows[0].failed_after, 1);
  EXPECT_NE(comparison_text(comparison, "A", "B", 0.10).find("2 regressions"), std::string::npos);
}

TEST(Compare, PageShowsRegressionsFirstAndEscapesEveryText) {
  std::vector<Verdict> before = {verdict_of("a", true), verdict_of("b", false), verdict_of("c", true, 2.0, "bench")};
  std::vector<Verdict> after = {verdict_of("a", false), verdict_of("b", true), verdict_of("c", true, 1.5, "bench")};
  after[0].errors = {"expected <b>&\"1\"</b>"};  // a message is text, never markup
  const std::string page = comparison_html(compare_runs(before, after, 0.10), "runs/<old>", "runs/new", 0.10);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<title>backendbench compare: runs/&lt;old&gt; (A) and runs/new (B)</title>"), std::string::npos);
  EXPECT_NE(page.find("2 regressions, 1 improvements"), std::string::npos);  // a broke, c slowed; b fixed
  EXPECT_NE(page.find("expected &lt;b&gt;&amp;&quot;1&quot;&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<b>&"), std::string::npos);
  // Regressions, then improvements, then the rows; c's lost speedup is among the regressions.
  const size_t regressions = page.find("id=\"regressions\""), improvements = page.find("id=\"improvements\""),
               rows = page.find("id=\"rows\"");
  ASSERT_NE(regressions, std::string::npos);
  EXPECT_LT(regressions, improvements);
  EXPECT_LT(improvements, rows);
  EXPECT_NE(page.substr(regressions, improvements - regressions).find("speedup 2.000x → 1.500x (-25.0%)"), std::string::npos);
  EXPECT_NE(page.substr(improvements, rows - improvements).find("passed"), std::string::npos);
}

TEST(Scaffold, WritesTheExactSignatureIntoTheNextFreeFile) {
  Scratch scratch;
  scratch.write("kernels/add/add_implementation_1.cpp", "");
  scratch.write("kernels/add/add_implementation_3.cu", "");
  const schema::TorchSchemaSource schemas;
  const std::string templates = std::string(BACKENDBENCH_TEST_SOURCE_DIR) + "/templates";
  const ScaffoldedKernel add = scaffold_kernel("add.Tensor", scratch.path() + "/kernels", false, schemas, templates, "2.x");
  EXPECT_EQ(add.path, scratch.path() + "/kernels/add/add_implementation_4.cpp");  // the folder add already serves add.Tensor
  EXPECT_EQ(add.backend, "impl4");
  EXPECT_EQ(add.declaration,
            "at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)");
  EXPECT_NE(add.text.find(add.declaration + " {"), std::string::npos);
  EXPECT_NE(add.text.find("TORCH_CHECK(false, \"add_kernel_impl (add/add_implementation_4.cpp) is not written yet\")"),
            std::string::npos);
  const ScaffoldedKernel relu = scaffold_kernel("aten.relu.default", scratch.path() + "/kernels", true, schemas, templates, "2.x");
  EXPECT_EQ(relu.path, scratch.path() + "/kernels/relu__default/relu__default_implementation_1.cu");
  EXPECT_NE(relu.text.find("getCurrentCUDAStream"), std::string::npos);
  write_scaffold(relu);
  std::ifstream written(relu.path);
  EXPECT_TRUE(written.good());
  try {
    write_scaffold(relu);
    ADD_FAILURE() << "replaced an existing kernel";
  } catch (const DiagnosticError& error) {
    EXPECT_NE(std::string(error.what()).find("exists already"), std::string::npos);
  }
}

TEST(Scaffold, UnknownOperator) {
  Scratch scratch;
  try {
    scaffold_kernel("frobnicate", scratch.path(), false, schema::TorchSchemaSource(), BACKENDBENCH_TEST_SOURCE_DIR "/templates", "");
    ADD_FAILURE() << "no error";
  } catch (const DiagnosticError& error) {
    EXPECT_EQ(std::string(error.what()).substr(0, 50), "new: error: unknown operator 'frobnicate.default';");
  }
}

TEST(Report, DataHoldsScoresRowsFailuresAndCases) {
  std::vector<Verdict> verdicts = {verdict_of("a", true), verdict_of("b", false), verdict_of("a", true, 2.0, "bench")};
  Verdict reference = verdict_of("a", true);
  reference.backend = "aten";
  verdicts.push_back(reference);
  const nlohmann::json data = report_data(verdicts, {{"kernels_label", "my_kernels"}, {"p", 1.5}, {"command", "x"}});
  ASSERT_EQ(data["groups"].size(), 2u);
  EXPECT_EQ(data["groups"][0]["label"], "aten");
  EXPECT_EQ(data["groups"][0]["correctness"], 1.0);
  EXPECT_TRUE(data["groups"][0]["performance"].is_null());
  EXPECT_EQ(data["groups"][1]["label"], "my_kernels");
  EXPECT_EQ(data["groups"][1]["correctness"], 0.0);
  EXPECT_EQ(data["groups"][1]["performance"], 2.0);
  EXPECT_EQ(data["groups"][1]["perf_at_p"], 0.0);  // faster than 1.5 but incorrect
  ASSERT_EQ(data["failures"].size(), 1u);
  EXPECT_EQ(data["failures"][0]["case"], "b");
  EXPECT_EQ(data["cases"].size(), 4u);
}

TEST(Report, EachOpLibraryIsAGroupOfItsOwn) {
  Verdict library = verdict_of("a", false);
  library.backend = "flag_gems";
  const nlohmann::json groups =
      group_scores({verdict_of("a", true), library}, {{"kernels_label", "my_kernels"}, {"op_libraries", {"flag_gems"}}}, 1.0);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]["label"], "my_kernels");
  EXPECT_EQ(groups[0]["correctness"], 1.0);
  EXPECT_EQ(groups[1]["label"], "flag_gems");
  EXPECT_EQ(groups[1]["correctness"], 0.0);
}

// The console and run.json (group_scores) and OVERALL_SUMMARY.md score the same groups alike.
TEST(Report, SummaryAndConsoleAgreePerBackend) {
  Verdict aten = verdict_of("a", true), timed = verdict_of("c", true, 2.0, "bench");
  aten.backend = "aten";
  timed.op = "add.Tensor";  // the kernels: relu wrong, add right and 2x
  const nlohmann::json run = {{"kernels_label", "my_kernels"}, {"p", 1.5}};
  const std::vector<Verdict> verdicts = {aten, verdict_of("b", false), timed};
  const nlohmann::json groups = group_scores(verdicts, run, 1.5);
  const std::string md = original_files(verdicts, "backendbench run", 1.5, backend_names(run)).overall_summary_md;
  ASSERT_EQ(groups.size(), 2u);
  std::string header = "| Metric |", correctness = "| Correctness Score |", performance = "| Performance Score (geomean speedup) |";
  for (const nlohmann::json& group : groups) {
    auto text = [&](const char* key) {
      if (group[key].is_null()) return std::string(" N/A |");
      char value[32];
      std::snprintf(value, sizeof(value), " %.2f |", group[key].get<double>());
      return std::string(value);
    };
    header += " " + group["label"].get<std::string>() + " |";
    correctness += text("correctness");
    performance += text("performance");
  }
  EXPECT_NE(md.find(header + "\n"), std::string::npos) << header << "\n" << md;
  EXPECT_NE(md.find(correctness + "\n"), std::string::npos) << correctness << "\n" << md;
  EXPECT_NE(md.find(performance + "\n"), std::string::npos) << performance << "\n" << md;
  EXPECT_EQ(groups[1]["correctness"], 0.5);  // per backend: the pooled figure would be 2 of 3
}

TEST(Report, PageEmbedsItsDataAndScriptsSafely) {
  Verdict hostile = verdict_of("</script><script>alert(1)</script>", false);
  const nlohmann::json data =
      report_data({hostile}, {{"suites", {"run <b>&"}}, {"backends", {"aten"}}, {"device", "cpu"}, {"p", 1.0}});
  const std::string page = report_html(data, BACKENDBENCH_TEST_SOURCE_DIR "/templates", "window.Plotly = {};");
  EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
  EXPECT_NE(page.find("<\\/script><script>alert(1)<\\/script>"), std::string::npos);
  EXPECT_NE(page.find("<title>backendbench: run &lt;b&gt;&amp; · aten · cpu</title>"), std::string::npos);
  EXPECT_NE(page.find("window.Plotly = {};"), std::string::npos);
  EXPECT_NE(page.find("@generated"), std::string::npos);
  const std::string without = report_html(data, BACKENDBENCH_TEST_SOURCE_DIR "/templates", "");
  EXPECT_NE(without.find("plotly.js was not found"), std::string::npos);
}

// A run as run.json describes it, started in /home/me/project.
const nlohmann::json kRunHere = {{"build_directory", "/home/me/project/build"},
                                 {"kernels_directory", "/home/me/project/my kernels"},
                                 {"working_directory", "/home/me/project"},
                                 {"device", "cpu"}};

TEST(Findings, WrongKernelsFirstWithTheirFirstReasonThenSlowOnesWithTheirSlowestInputs) {
  Verdict wrong_once = verdict_of("a", false), fast = verdict_of("c", true, 2.0, "bench"), aten = verdict_of("a", true);
  wrong_once.op = "add.Tensor";
  fast.op = "add.Tensor";
  aten.backend = "aten";
  wrong_once.errors = {"add.Tensor case a: wrong values\nmore detail", "a second error"};
  std::vector<Verdict> verdicts = {verdict_of("a", true), aten, wrong_once, fast};
  for (const double speedup : {0.5, 0.25, 0.8, 0.9}) {
    Verdict slow = verdict_of("slow" + std::to_string(speedup), true, speedup, "bench");
    slow.arguments = "((T([" + std::to_string(static_cast<int>(speedup * 100)) + "], f32),), {})";
    verdicts.push_back(slow);
  }
  Verdict skipped = verdict_of("s", true);
  skipped.status = Verdict::Status::kSkipped;
  skipped.backend = "impl2";
  skipped.skip_reason = "impl2 is a CUDA kernel and this machine has no CUDA device";
  verdicts.push_back(skipped);
  verdicts.push_back(skipped);

  const Findings findings = run_findings(verdicts, kRunHere);
  ASSERT_EQ(findings.kernels.size(), 2u);  // aten left out: kernels ran
  const KernelFinding& first = findings.kernels[0];
  EXPECT_EQ(first.op, "add.Tensor");
  EXPECT_TRUE(first.wrong());
  EXPECT_EQ(first.failed, 1);
  EXPECT_EQ(first.tests, 2);
  EXPECT_EQ(first.failed_case, "a");
  EXPECT_EQ(first.first_reason, "add.Tensor case a: wrong values");  // its first line
  const KernelFinding& second = findings.kernels[1];
  EXPECT_EQ(second.op, "relu.default");
  EXPECT_TRUE(second.slow());
  EXPECT_EQ(second.timed, 4);
  EXPECT_NEAR(second.speedup, std::pow(0.5 * 0.25 * 0.8 * 0.9, 0.25), 1e-12);
  ASSERT_EQ(second.slowest.size(), 3u);  // the three slowest, slowest first
  EXPECT_DOUBLE_EQ(second.slowest[0].speedup, 0.25);
  EXPECT_EQ(second.slowest[0].arguments, "((T([25], f32),), {})");
  EXPECT_DOUBLE_EQ(second.slowest[2].speedup, 0.8);
  ASSERT_EQ(findings.skipped.size(), 1u);
  EXPECT_EQ(findings.skipped[0].count, 2);
  EXPECT_EQ(findings.skipped[0].backend, "impl2");

  Verdict checked = verdict_of("b", false);  // a failed check: its own message, without the located error
  checked.checks = {{"no_fallback", true, ""}, {"outputs", false, "max abs error 3 at [0, 1]\nexpected 1, got 4"}};
  EXPECT_EQ(run_findings({checked}, kRunHere).kernels[0].first_reason, "outputs: max abs error 3 at [0, 1]");

  const Findings reference_alone = run_findings({aten}, kRunHere);  // a run of aten alone lists it
  ASSERT_EQ(reference_alone.kernels.size(), 1u);
  EXPECT_EQ(reference_alone.kernels[0].backend, "aten");
}

TEST(Findings, SpeedupIntervalComesFromTheSpreadAcrossCases) {
  const Findings one = run_findings({verdict_of("a", true, 2.0, "bench")}, kRunHere);
  EXPECT_DOUBLE_EQ(one.kernels[0].speedup, 2.0);
  EXPECT_TRUE(std::isnan(one.kernels[0].speedup_low));  // one case: no interval
  const Findings same = run_findings({verdict_of("a", true, 2.0, "bench"), verdict_of("b", true, 2.0, "bench")}, kRunHere);
  EXPECT_NEAR(same.kernels[0].speedup_low, 2.0, 1e-12);  // no spread
  EXPECT_NEAR(same.kernels[0].speedup_high, 2.0, 1e-12);
  const Findings spread = run_findings({verdict_of("a", true, 1.0, "bench"), verdict_of("b", true, 4.0, "bench")}, kRunHere);
  // log-mean log 2, sd of the logs log(4)/sqrt(2), t(1) = 12.706: exp(log 2 ± 12.706 * log(4) / 2)
  EXPECT_NEAR(spread.kernels[0].speedup, 2.0, 1e-12);
  EXPECT_NEAR(spread.kernels[0].speedup_low, 2.0 * std::exp(-12.706 * std::log(4.0) / 2), 1e-9);
  EXPECT_NEAR(spread.kernels[0].speedup_high, 2.0 * std::exp(12.706 * std::log(4.0) / 2), 1e-6);
  EXPECT_DOUBLE_EQ(spread.kernels[0].case_low, 1.0);  // and the range of its cases
  EXPECT_DOUBLE_EQ(spread.kernels[0].case_high, 4.0);
}

TEST(Findings, ReproduceCommandRunsTheOneCaseAgainWithItsSalt) {
  Verdict checked = verdict_of("f32_2_ad7ca611", false);
  checked.salt = 0x5eed;
  checked.device = "cpu";
  EXPECT_EQ(reproduce_command(checked, kRunHere),
            "BACKENDBENCH_SALT=0x0000000000005eed BACKENDBENCH_DEVICE=cpu build/backendbench_test_smoke "
            "--gtest_filter=smoke/relu__default.impl1/f32_2_ad7ca611");
  Verdict timed = checked;
  timed.frontend = "bench";
  timed.device = "cuda";
  EXPECT_EQ(reproduce_command(timed, kRunHere),
            "BACKENDBENCH_SALT=0x0000000000005eed BACKENDBENCH_DEVICE=cuda build/bench "
            "'--benchmark_filter=^smoke/relu.default/f32_2_ad7ca611/impl1$'");
  // Elsewhere than where the run started: the whole path, quoted where the shell needs it.
  nlohmann::json elsewhere = kRunHere;
  elsewhere["build_directory"] = "/tmp/a build";
  EXPECT_NE(reproduce_command(checked, elsewhere).find(" '/tmp/a build/backendbench_test_smoke' "), std::string::npos);
  // A kernel that did not compile has no test in the build: the run on its operator shows the error again.
  nlohmann::json broken = kRunHere;
  checked.kernel_file = "/home/me/project/my kernels/relu/relu_implementation_4.cpp";
  broken["kernels_not_compiled"] = {checked.kernel_file};
  EXPECT_EQ(reproduce_command(checked, broken),
            "backendbench run --suite smoke --backend 'my kernels' --ops relu.default --device cpu --no-timing --build build");
}

TEST(Findings, PathsAreShownInTheKernelFolderAndRelativeToWhereTheRunStarted) {
  EXPECT_EQ(shown_path("/home/me/project/build/backendbench_kernel_view/relu/relu_implementation_1.cpp", kRunHere),
            "my kernels/relu/relu_implementation_1.cpp");  // the view's link, shown where the kernel lives
  EXPECT_EQ(shown_path("/home/me/project/traces/smoke.txt", kRunHere), "traces/smoke.txt");
  EXPECT_EQ(shown_path("/home/me/projectile/x.cpp", kRunHere), "/home/me/projectile/x.cpp");  // not under it
  EXPECT_EQ(shown_path("/home/me/project/x.cpp", nlohmann::json::object()), "/home/me/project/x.cpp");  // an older run.json
}

TEST(Report, TitleSaysWhatRanWithPathsRelativeToWhereItStarted) {
  nlohmann::json run = kRunHere;
  run["suites"] = {"smoke", "edge"};
  run["backends"] = {"aten", "directory (/home/me/project/generated_kernels)", "/home/me/project/my kernels", "/elsewhere/k"};
  EXPECT_EQ(report_data({}, run)["title"], "smoke, edge · aten, directory (generated_kernels), my kernels, /elsewhere/k · cpu");
  run["versions"] = {{"gpu", "NVIDIA H200"}};
  EXPECT_EQ(report_data({}, run)["title"], "smoke, edge · aten, directory (generated_kernels), my kernels, /elsewhere/k · NVIDIA H200");
}

TEST(Report, SeveralRunsOnOnePageTaggedByGpuOrFolder) {
  const nlohmann::json h100 = {{"versions", {{"gpu", "NVIDIA H100"}}}, {"suites", {"smoke"}}};
  const nlohmann::json h200 = {{"versions", {{"gpu", "NVIDIA H200"}}}, {"suites", {"smoke"}}};
  EXPECT_EQ(run_tags({"a", "b"}, {h100, h200}), (std::vector<std::string>{"NVIDIA H100", "NVIDIA H200"}));
  EXPECT_EQ(run_tags({"runs/before/", "runs/after"}, {h100, h100}), (std::vector<std::string>{"before", "after"}));
  EXPECT_EQ(run_tags({"x/out", "y/out"}, {h100, h100}), (std::vector<std::string>{"out", "out (2)"}));

  Verdict slow = verdict_of("a", true, 0.5, "bench");
  const nlohmann::json data = combined_report_data({{"NVIDIA H100", {verdict_of("a", true)}, h100},
                                                   {"NVIDIA H200", {verdict_of("a", false), slow}, h200}});
  ASSERT_EQ(data["runs"].size(), 2u);
  EXPECT_EQ(data["runs"][1]["tag"], "NVIDIA H200");
  ASSERT_EQ(data["groups"].size(), 2u);
  EXPECT_EQ(data["groups"][0]["label"], "NVIDIA H100: directory");
  ASSERT_EQ(data["findings"]["kernels"].size(), 2u);
  EXPECT_EQ(data["findings"]["kernels"][0]["backend"], "NVIDIA H200: impl1");  // the wrong one first, across runs
  EXPECT_TRUE(data["findings"]["kernels"][0]["wrong"].get<bool>());
  const std::string reproduce = data["findings"]["kernels"][0]["reproduce"];
  const std::string untagged = " --gtest_filter=smoke/relu__default.impl1/a";  // the backend as its own run names it
  EXPECT_EQ(reproduce.substr(reproduce.size() - std::min(reproduce.size(), untagged.size())), untagged) << reproduce;
  EXPECT_EQ(data["cases"].size(), 3u);
  EXPECT_EQ(data["failures"][0]["backend"], "NVIDIA H200: impl1");
}

TEST(EntryPacks, SmallJobsOfASuiteShareAnEntryUpToTheLimit) {
  const std::vector<PackUnit> units = {{"torchbench", 120}, {"torchbench", 50}, {"torchbench", 40}, {"torchbench", 300},
                                       {"torchbench", 10},  {"smoke", 5},       {"smoke", 5}};
  const std::vector<std::vector<size_t>> packs = pack_units(units, 200);
  // 120 and 50 fit in 200, 40 more would not; the unit of 300 closes the pack of 40
  ASSERT_EQ(packs.size(), 5u);
  EXPECT_EQ(packs[0], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(packs[1], (std::vector<size_t>{2}));
  EXPECT_EQ(packs[2], (std::vector<size_t>{3}));  // more than the limit: alone
  EXPECT_EQ(packs[3], (std::vector<size_t>{4}));  // another suite's unit never joins it
  EXPECT_EQ(packs[4], (std::vector<size_t>{5, 6}));
  std::vector<int> seen(units.size());
  for (const auto& pack : packs) {
    for (const size_t unit : pack) ++seen[unit];
  }
  EXPECT_EQ(seen, std::vector<int>(units.size(), 1));  // every unit exactly once
  EXPECT_EQ(pack_units(units, 1).size(), units.size());  // a limit of 1: nothing packed
  // Parts of a split operator stay alone, however small, and the small units around them still share a pack.
  const std::vector<std::vector<size_t>> with_parts =
      pack_units({{"torchbench", 10}, {"torchbench", 20, true}, {"torchbench", 20, true}, {"torchbench", 10}}, 200);
  ASSERT_EQ(with_parts.size(), 3u);
  EXPECT_EQ(with_parts[0], (std::vector<size_t>{0, 3}));
  EXPECT_EQ(with_parts[1], (std::vector<size_t>{1}));
  EXPECT_EQ(with_parts[2], (std::vector<size_t>{2}));
}

TEST(EntryPacks, TheLimitKeepsTheRunsParallelism) {
  EXPECT_EQ(pack_limit(17546, 200, 16, false), 200u);  // the split size, on the CPU
  EXPECT_EQ(pack_limit(17546, 0, 16, false), 200u);    // 0 (never split): 200
  EXPECT_EQ(pack_limit(17546, 200, 16, true), 1097u);  // on GPUs: the run's share per entry at once...
  EXPECT_EQ(pack_limit(17546, 200, 4, true), 1600u);   // ... up to 8 times the split size
  EXPECT_EQ(pack_limit(60, 200, 2, false), 30u);       // a small run: at least as many entries as run at once
  EXPECT_EQ(pack_limit(61, 200, 2, true), 31u);
  EXPECT_EQ(pack_limit(0, 200, 4, false), 1u);
  EXPECT_EQ(pack_limit(100, 1000, 0, false), 100u);  // no parallelism given: one at once
}

TEST(EntryCosts, LearnsWhatCasesTookPerOperatorBackendAndDeviceKind) {
  Scratch scratch;
  const auto verdict = [](const char* op, const char* device, int64_t ms, const char* frontend = "tests") {
    Verdict made;
    made.suite = "torchbench", made.op = op, made.backend = "aten", made.device = device, made.frontend = frontend;
    made.case_ms = ms;
    return made;
  };
  CaseCosts costs;
  EXPECT_TRUE(costs.empty());
  costs.learn({verdict("convolution.default", "cuda:0", 40), verdict("convolution.default", "cuda:3", 60),
               verdict("convolution.default", "cpu", 900), verdict("relu.default", "cuda", -1),  // never ran
               verdict("relu.default", "cuda", 500, "bench")});                                  // a timing, not a check
  EXPECT_EQ(costs.per_case("torchbench", "convolution.default", "aten", "cuda"), 50.0);
  EXPECT_EQ(costs.per_case("torchbench", "convolution.default", "aten", "cpu"), 900.0);
  EXPECT_EQ(costs.per_case("torchbench", "relu.default", "aten", "cuda"), std::nullopt);
  EXPECT_EQ(costs.per_case("torchbench", "convolution.default", "impl1", "cuda"), std::nullopt);
  const std::string path = scratch.path() + "/logs/case_costs.json";
  costs.write(path);
  CaseCosts back = CaseCosts::read(path);
  EXPECT_EQ(back.per_case("torchbench", "convolution.default", "aten", "cuda"), 50.0);
  EXPECT_EQ(back.per_case("torchbench", "convolution.default", "aten", "cpu"), 900.0);
  // A later run's times replace an earlier run's; what it did not run is kept.
  back.learn({verdict("convolution.default", "cuda", 10)});
  EXPECT_EQ(back.per_case("torchbench", "convolution.default", "aten", "cuda"), 10.0);
  EXPECT_EQ(back.per_case("torchbench", "convolution.default", "aten", "cpu"), 900.0);
  // No file, or not this file: no history (the run plans by counts), never an error.
  EXPECT_TRUE(CaseCosts::read(scratch.path() + "/none.json").empty());
  EXPECT_TRUE(CaseCosts::read(scratch.write("other.json", R"({"schema": "other", "jobs": {"a/b/c/cuda": {"cases": 1, "ms": 2}}})")).empty());
  EXPECT_TRUE(CaseCosts::read(scratch.write("broken.json", "{not json")).empty());
}

TEST(EntryCosts, OnlyAnOperatorThatWouldOutlastTheOthersIsSplitFiner) {
  EXPECT_DOUBLE_EQ(longest_entry_ms(200000, 16), 3125);  // a quarter of each entry's share
  EXPECT_DOUBLE_EQ(longest_entry_ms(200000, 4), 12500);
  EXPECT_DOUBLE_EQ(longest_entry_ms(3000, 2), 1000);  // never under a second
  EXPECT_DOUBLE_EQ(longest_entry_ms(3000, 0), 1000);
  EXPECT_EQ(parts_for(1900, 95000, 3125, 10), 31);  // TorchBench's convolution_backward on four GPUs
  EXPECT_EQ(parts_for(1900, 95000, 12500, 10), 10);  // on one: the build's split stands
  EXPECT_EQ(parts_for(190, 500, 3125, 0), 1);
  EXPECT_EQ(parts_for(3, 1e6, 1000, 0), 3);  // at most a part per case
  EXPECT_EQ(parts_for(0, 1e6, 1000, 0), 1);
}

TEST(SuiteManifest, WhichBackendsRunOnTheCpu) {
  const auto backend = [](const char* kind, const char* language, bool cuda) {
    SuiteManifest::Backend facts;
    facts.kind = kind;
    facts.language = language;
    facts.cuda = cuda;
    return facts;
  };
  EXPECT_TRUE(backend("kernel", "cpp", false).runs_on_cpu(true));  // a C++ kernel in a CUDA run too
  EXPECT_FALSE(backend("kernel", "cuda", true).runs_on_cpu(true));
  EXPECT_FALSE(backend("reference", "", false).runs_on_cpu(true));
  EXPECT_TRUE(backend("reference", "", false).runs_on_cpu(false));
  EXPECT_FALSE(backend("kernel", "python", false).runs_on_cpu(true));  // a PyTorch composition: the run's device
  EXPECT_FALSE(backend("kernel", "python", true).runs_on_cpu(false));  // Triton
}

TEST(SuiteManifest, ReadsTheGeneratorsFileAndNamesABadOne) {
  Scratch scratch;
  const std::string good = scratch.write(
      "suite.json",
      R"json({"schema": "backendbench-suite", "version": 1, "suite": "s", "excluded_inputs": 2, "unselected_inputs": 0,
          "operators": [{"operator": "relu.default", "folder": "relu__default", "schema": "aten::relu(Tensor self) -> Tensor",
                         "cases": [{"name": "f32_4_x", "arguments": "((T([4], f32),), {})", "file": "t.txt", "line": 2,
                                    "count": 1, "input_elements": 4}],
                         "backends": [{"name": "aten", "kind": "reference"},
                                      {"name": "impl1", "kind": "kernel", "file": "k.cpp", "cuda": true}]}]})json");
  const SuiteManifest manifest = read_suite_manifest(good);
  ASSERT_EQ(manifest.operators.size(), 1u);
  EXPECT_EQ(manifest.excluded_inputs, 2);
  EXPECT_EQ(manifest.operators[0].cases[0].input_elements, 4);
  EXPECT_TRUE(manifest.operators[0].backends[1].cuda);
  const std::string bad = scratch.write("other.json", R"({"schema": "something-else"})");
  try {
    read_suite_manifest(bad);
    ADD_FAILURE() << "no error";
  } catch (const DiagnosticError& error) {
    EXPECT_EQ(std::string(error.what()), bad + ": error: not a suite manifest of version 1; expected a suite.json written by backendbench-gen");
  }
}

TEST(BuildTree, ReadsCachedValues) {
  Scratch scratch;
  scratch.write("CMakeCache.txt", "# comment\nBACKENDBENCH_SUITES:STRING=smoke;edge\nBACKENDBENCH_OPS:STRING=\n");
  const BuildTree tree("/src", scratch.path());
  EXPECT_TRUE(tree.configured());
  EXPECT_EQ(tree.cached("BACKENDBENCH_SUITES"), "smoke;edge");
  EXPECT_EQ(tree.cached("BACKENDBENCH_OPS"), "");
  EXPECT_FALSE(tree.cached("BACKENDBENCH_TOPN").has_value());
  EXPECT_EQ(tree.suite_manifest_path("smoke"), scratch.path() + "/generated/smoke/suite.json");
}

TEST(TreeSelection, FiltersCoverTheirOverloads) {
  EXPECT_TRUE(filter_covers("relu", "relu"));
  EXPECT_TRUE(filter_covers("relu", "relu.default"));
  EXPECT_TRUE(filter_covers("add", "add.Tensor"));
  EXPECT_TRUE(filter_covers("add", "aten.add.Scalar"));
  EXPECT_TRUE(filter_covers("add.Tensor", "aten.add.Tensor"));
  EXPECT_FALSE(filter_covers("add.Tensor", "add")) << "one overload does not cover the base name's others";
  EXPECT_FALSE(filter_covers("add.Tensor", "add.Scalar"));
  EXPECT_FALSE(filter_covers("relu", "leaky_relu"));
  EXPECT_FALSE(filter_covers("relu.default", "relu_.default"));
}

// A build folder's cache as a map (nullopt for a name it lacks).
CachedValue cache_of(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

TEST(TreeSelection, ANewFolderGetsTheSelectionAsItIs) {
  TreeSelection selection;
  selection.suites = {{"smoke", "", true}, {"edge", "", false}};
  selection.kernels_directory = "/k";
  selection.ops = {"relu", "add.Tensor"};
  const auto values = tree_values(selection, cache_of({}));
  EXPECT_EQ(values.at("BACKENDBENCH_SUITES"), "smoke;edge");
  EXPECT_EQ(values.at("BACKENDBENCH_OPS"), "relu,add.Tensor");
  EXPECT_EQ(values.at("BACKENDBENCH_KERNELS_DIR"), "/k");
  EXPECT_EQ(values.at("BACKENDBENCH_TOPN"), "0");
  EXPECT_EQ(values.count("BACKENDBENCH_CANDIDATE_SLOTS"), 0u);
}

TEST(TreeSelection, AFolderThatServesTheSelectionKeepsItsValues) {
  const std::map<std::string, std::string> folder = {{"BACKENDBENCH_SUITES", "smoke;edge"}, {"BACKENDBENCH_SUITE_FILES", ""},
                                                     {"BACKENDBENCH_OPS", "relu,add"}, {"BACKENDBENCH_OP_LIBRARIES", ""},
                                                     {"BACKENDBENCH_KERNELS_DIR", "/k"}, {"BACKENDBENCH_TOPN", "0"}};
  TreeSelection narrower;
  narrower.suites = {{"edge", "", false}};
  narrower.kernels_directory = "/k";
  narrower.ops = {"relu.default"};
  auto values = tree_values(narrower, cache_of(folder));
  for (const char* name : {"BACKENDBENCH_SUITES", "BACKENDBENCH_OPS", "BACKENDBENCH_KERNELS_DIR", "BACKENDBENCH_TOPN"}) {
    EXPECT_EQ(values.at(name), folder.at(name)) << name << ": nothing to configure";
  }
  // Wider: what the folder had, and the rest; switching back is then narrower again.
  TreeSelection wider = narrower;
  wider.suites = {{"smoke", "", true}, {"opinfo", "", false}};
  wider.ops = {"mul", "add.Tensor"};
  values = tree_values(wider, cache_of(folder));
  EXPECT_EQ(values.at("BACKENDBENCH_SUITES"), "smoke;edge;opinfo");
  EXPECT_EQ(values.at("BACKENDBENCH_OPS"), "relu,add,mul");
  // Every operator, on either side, is every operator.
  TreeSelection all = narrower;
  all.ops = {};
  EXPECT_EQ(tree_values(all, cache_of(folder)).at("BACKENDBENCH_OPS"), "");
  auto every = folder;
  every["BACKENDBENCH_OPS"] = "";
  EXPECT_EQ(tree_values(narrower, cache_of(every)).at("BACKENDBENCH_OPS"), "");
  // What selects cases or builds kernels is the selection's own.
  TreeSelection other = narrower;
  other.kernels_directory = "/other";
  other.topn = 5;
  values = tree_values(other, cache_of(folder));
  EXPECT_EQ(values.at("BACKENDBENCH_KERNELS_DIR"), "/other");
  EXPECT_EQ(values.at("BACKENDBENCH_TOPN"), "5");
}

TEST(TreeSelection, SuiteFilesAreKeptWhileTheirFilesExist) {
  Scratch scratch;
  const std::string kept = scratch.write("mine.txt", "Operator: aten.relu.default\n");
  const std::string gone = scratch.path() + "/deleted.txt";
  const std::string other = scratch.write("mine2.txt", "Operator: aten.relu.default\n");
  const auto folder = cache_of({{"BACKENDBENCH_SUITE_FILES", "mine=" + kept + ";old=" + gone}});
  TreeSelection selection;
  selection.suites = {{"smoke", "", true}};
  EXPECT_EQ(tree_values(selection, folder).at("BACKENDBENCH_SUITE_FILES"), "mine=" + kept);
  selection.suites = {{"mine", other, true}};
  EXPECT_EQ(tree_values(selection, folder).at("BACKENDBENCH_SUITE_FILES"), "mine=" + other)
      << "a suite named again with another file replaces it";
}

TEST(TreeSelection, CandidateSlotsOnlyGrow) {
  TreeSelection selection;
  selection.candidate_slots = 4;
  EXPECT_EQ(tree_values(selection, cache_of({})).at("BACKENDBENCH_CANDIDATE_SLOTS"), "8");
  EXPECT_EQ(tree_values(selection, cache_of({{"BACKENDBENCH_CANDIDATE_SLOTS", "16"}})).at("BACKENDBENCH_CANDIDATE_SLOTS"), "16");
  selection.candidate_slots = 12;
  EXPECT_EQ(tree_values(selection, cache_of({{"BACKENDBENCH_CANDIDATE_SLOTS", "8"}})).at("BACKENDBENCH_CANDIDATE_SLOTS"), "12");
}

TEST(Watch, KernelFilesAreSourcesAndHeadersNotAnEditorsFiles) {
  for (const char* name : {"relu_implementation_1.cpp", "relu_implementation_2.cu", "helpers.h", "tile.cuh", "x.hpp",
                           "relu_implementation_4.py"}) {
    EXPECT_TRUE(is_kernel_file(name)) << name;
  }
  for (const char* name : {".relu_implementation_1.cpp.swp", "relu_implementation_1.cpp~", "#relu_implementation_1.cpp#",
                           "4913", "notes.txt", "relu_implementation_1.cpp.tmp"}) {
    EXPECT_FALSE(is_kernel_file(name)) << name;
  }
}

TEST(Watch, ChangedFoldersMapToTheSelectionsOperators) {
  EXPECT_EQ(operators_to_rerun({"relu", "add"}, {}), (std::vector<std::string>{"add.Tensor", "relu.default"}));
  EXPECT_EQ(operators_to_rerun({"relu", "add"}, {"relu"}), (std::vector<std::string>{"relu.default"}));
  EXPECT_EQ(operators_to_rerun({"add"}, {"add.Tensor"}), (std::vector<std::string>{"add.Tensor"}));
  EXPECT_EQ(operators_to_rerun({"add__Scalar"}, {"add.Tensor"}), std::vector<std::string>{});
  EXPECT_EQ(operators_to_rerun({"leaky_relu"}, {"relu"}), std::vector<std::string>{});
  EXPECT_EQ(operators_to_rerun({"not an operator!"}, {}), std::vector<std::string>{});
}

// A real inotify watch on a scratch folder: saves are seen per operator folder, a new folder is
// watched from its creation, an editor's swap file is not a change.
TEST(Watch, SeesSavesInOperatorFoldersAndNewOnes) {
  Scratch scratch;
  scratch.write("kernels/relu/relu_implementation_1.cpp", "// v1\n");
  KernelFolderWatch watch(scratch.path() + "/kernels");
  using std::chrono::milliseconds;
  EXPECT_TRUE(watch.wait(milliseconds(300), milliseconds(50)).empty()) << "nothing was saved yet";
  scratch.write("kernels/relu/.relu_implementation_1.cpp.swp", "swap");
  EXPECT_TRUE(watch.wait(milliseconds(300), milliseconds(50)).empty()) << "a swap file is not a save";
  scratch.write("kernels/relu/relu_implementation_1.cpp", "// v2\n");
  EXPECT_EQ(watch.wait(milliseconds(2000), milliseconds(50)), (std::set<std::string>{"relu"}));
  // An editor that saves by renaming a new file over the old one.
  scratch.write("kernels/relu/relu_implementation_1.cpp.new", "// v3\n");
  std::rename((scratch.path() + "/kernels/relu/relu_implementation_1.cpp.new").c_str(),
              (scratch.path() + "/kernels/relu/relu_implementation_1.cpp").c_str());
  EXPECT_EQ(watch.wait(milliseconds(2000), milliseconds(50)), (std::set<std::string>{"relu"}));
  // A new operator folder, then a kernel saved in it.
  files::make_directories(scratch.path() + "/kernels/add");
  (void)watch.wait(milliseconds(300), milliseconds(50));
  scratch.write("kernels/add/add_implementation_1.cpp", "// add\n");
  EXPECT_EQ(watch.wait(milliseconds(2000), milliseconds(50)), (std::set<std::string>{"add"}));
  EXPECT_EQ(watch.touched_files(), (std::set<std::string>{"add/add_implementation_1.cpp"}));
  // The files of one save: the kernel and a header, not the swap file beside them.
  scratch.write("kernels/relu/relu_implementation_1.cpp", "// v4\n");
  scratch.write("kernels/relu/helpers.h", "// h\n");
  scratch.write("kernels/relu/.relu_implementation_1.cpp.swp", "swap");
  EXPECT_EQ(watch.wait(milliseconds(2000), milliseconds(50)), (std::set<std::string>{"relu"}));
  EXPECT_EQ(watch.touched_files(), (std::set<std::string>{"relu/helpers.h", "relu/relu_implementation_1.cpp"}));
  volatile bool stop = true;
  scratch.write("kernels/relu/relu_implementation_1.cpp", "// v5\n");
  EXPECT_TRUE(watch.wait(milliseconds(2000), milliseconds(50), &stop).empty()) << "a stop request ends the wait";
}

// Which saved files get a quick verdict: kernel files of the selection that a candidate slot can
// build alone, with the headers they include by quotes written beside them; the rest wait for
// the full run.
TEST(Watch, QuickChecksAreTheSavedKernelsASlotCanBuildAlone) {
  Scratch scratch;
  scratch.write("kernels/elementwise.h", "// root\n");
  scratch.write("kernels/relu/relu_implementation_1.cpp", "#include <ATen/ATen.h>\n");
  scratch.write("kernels/relu/relu_implementation_2.cu", "#include <ATen/ATen.h>\n");
  scratch.write("kernels/relu/relu_implementation_3.py", "import torch\n");
  scratch.write("kernels/relu/relu_implementation_4.cpp", "#include <ATen/ATen.h>\n  #  include \"../elementwise.h\"\n");
  scratch.write("kernels/relu/relu_implementation_6.cpp", "#include \"missing.h\"\n");
  scratch.write("kernels/relu/relu_implementation_7.cpp", "#include \"sub/elementwise.h\"\n");
  scratch.write("kernels/relu/helpers.h", "// h\n");
  scratch.write("kernels/relu/notes.cpp", "// not a kernel\n");
  scratch.write("kernels/add/add_implementation_1.cpp", "#include \"elementwise.h\"\n#include \"helpers.h\"\n");
  scratch.write("kernels/add/helpers.h", "// add's\n");
  // Links lead out of the kernel folder, where the folder's sandboxed build cannot follow them: a
  // linked header is not copied (so a kernel including it waits for the full run), nor a linked kernel read.
  scratch.write("outside/key.txt", "sk-planted\n");
  ASSERT_EQ(symlink((scratch.path() + "/outside/key.txt").c_str(), (scratch.path() + "/kernels/relu/key.h").c_str()), 0);
  scratch.write("kernels/relu/relu_implementation_8.cpp", "#include \"key.h\"\n");
  ASSERT_EQ(symlink((scratch.path() + "/outside/key.txt").c_str(),
                    (scratch.path() + "/kernels/relu/relu_implementation_9.cpp").c_str()), 0);
  const std::string root = scratch.path() + "/kernels";
  const std::set<std::string> touched = {"relu/relu_implementation_1.cpp", "relu/relu_implementation_2.cu",
                                         "relu/relu_implementation_3.py", "relu/relu_implementation_4.cpp",
                                         "relu/relu_implementation_5.cpp" /* removed */, "relu/relu_implementation_6.cpp",
                                         "relu/relu_implementation_7.cpp", "relu/relu_implementation_8.cpp",
                                         "relu/relu_implementation_9.cpp", "relu/helpers.h", "relu/notes.cpp",
                                         "add/add_implementation_1.cpp"};
  const auto files_of = [](const std::vector<QuickCheck>& checks) {
    std::vector<std::string> files;
    for (const QuickCheck& check : checks) files.push_back(check.file);
    return files;
  };
  const std::vector<QuickCheck> plain = quick_checks(root, touched, {"relu"}, /*cuda=*/false, /*python=*/false);
  EXPECT_EQ(files_of(plain), (std::vector<std::string>{"relu/relu_implementation_1.cpp", "relu/relu_implementation_4.cpp"}));
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].op, "relu.default");
  EXPECT_EQ(plain[0].path, root + "/relu/relu_implementation_1.cpp");
  EXPECT_EQ(plain[0].language, agents::KernelLanguage::kCpp);
  EXPECT_TRUE(plain[0].beside.empty()) << "no quoted include, nothing beside";
  EXPECT_EQ(plain[1].beside, (std::map<std::string, std::string>{{"elementwise.h", "// root\n"},
                                                                 {"relu/elementwise.h", "// root\n"},
                                                                 {"relu/helpers.h", "// h\n"}}));
  EXPECT_EQ(plain[1].beside.count("relu/key.h"), 0u) << "a linked header is not copied";
  const std::vector<QuickCheck> every = quick_checks(root, touched, {}, /*cuda=*/true, /*python=*/true);
  EXPECT_EQ(files_of(every), (std::vector<std::string>{"add/add_implementation_1.cpp", "relu/relu_implementation_1.cpp",
                                                       "relu/relu_implementation_2.cu", "relu/relu_implementation_3.py",
                                                       "relu/relu_implementation_4.cpp"}));
  ASSERT_EQ(every.size(), 5u);
  EXPECT_EQ(every[0].op, "add.Tensor");
  // Its own folder's helpers.h, not relu's; the root's header in both places.
  EXPECT_EQ(every[0].beside, (std::map<std::string, std::string>{{"elementwise.h", "// root\n"},
                                                                 {"add/elementwise.h", "// root\n"},
                                                                 {"add/helpers.h", "// add's\n"}}));
  EXPECT_EQ(every[2].language, agents::KernelLanguage::kCuda);
  EXPECT_EQ(every[3].language, agents::KernelLanguage::kPython);
}

TEST(Watch, AQuickVerdictSaysWhatTheRewardFound) {
  const QuickCheck check{"relu.default", agents::KernelLanguage::kCpp, "relu/relu_implementation_1.cpp", "/k/relu/relu_implementation_1.cpp"};
  agents::Reward reward;
  reward.outcome = "passed";
  reward.passed = 9;
  reward.skipped = 2;
  reward.seconds = 1.5;
  reward.build_seconds = 1.25;
  reward.check_seconds = 0.2;
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: correct on 9 cases (2 skipped) (1.50 s: build 1.25 s, check 0.20 s)");
  reward.outcome = "failed";
  reward.passed = 8;
  reward.failed = 1;
  reward.failed_case = "smoke/f32_2_ad7ca611";
  reward.reason = "outputs: output 0: 1 of 2 values differ";
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: WRONG on 1 of 11 cases (1.50 s: build 1.25 s, check 0.20 s)\n"
            "  first: smoke/f32_2_ad7ca611\n  outputs: output 0: 1 of 2 values differ");
  reward.failed = 0;
  reward.reason = "no case ran (every case skipped)";
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: no verdict: no case ran (every case skipped) (1.50 s: build 1.25 s, check 0.20 s)");
  reward.outcome = "build_failed";
  reward.build_errors = {"relu/relu_implementation_1.cpp:2:5: error: use of undeclared identifier 'nope'", "    nope;"};
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: does not build (1.50 s: build 1.25 s, check 0.20 s)\n"
            "  relu/relu_implementation_1.cpp:2:5: error: use of undeclared identifier 'nope'\n      nope;");
  reward.outcome = "error";
  reward.reason = "'relu' is not an operator of the suites edge";
  EXPECT_EQ(quick_verdict_text(check, reward),
            "verdict relu/relu_implementation_1.cpp: not checked: 'relu' is not an operator of the suites edge");
}

TEST(Watch, AFolderThatCannotBeWatchedIsOneLocatedError) {
  Scratch scratch;
  try {
    KernelFolderWatch watch(scratch.path() + "/missing");
    FAIL() << "a missing folder was watched";
  } catch (const CliError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(scratch.path() + "/missing: error: cannot watch this folder: ", 0), 0u)
        << error.what();
  }
}

}  // namespace
}  // namespace backendbench::cli
