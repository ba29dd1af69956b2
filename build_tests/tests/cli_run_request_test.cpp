// Unit tests of the run's arguments (one test per diagnostic): cli/run_request.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "cli/errors.h"
#include "cli/run_request.h"
#include "cli_test_support.h"

namespace backendbench::cli {
namespace {

using namespace test;

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

}  // namespace
}  // namespace backendbench::cli
