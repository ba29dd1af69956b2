// What `backendbench run` is asked to do: its arguments as typed, and the request they make once
// checked. Every check happens here, before anything is configured, built or written, and each
// failure is one CliError naming the option, the value and the accepted form.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/generation_loop.h"
#include "agents/kernel_prompt.h"
#include "agents/model_client.h"
#include "planner/run_plan.h"

namespace backendbench::cli {

// The command stands on the rooms below it: the llm and kernel_agent loops, and the planner.
using namespace backendbench::agents;  // NOLINT(google-build-using-namespace)
using namespace backendbench::planner;   // NOLINT(google-build-using-namespace)

// The built-in suites, in the order `--help` lists them.
inline const std::vector<std::string> kBuiltinSuites = {"smoke", "edge", "opinfo", "facto", "torchbench", "sample"};
// The Python op libraries a backend may name: python/backendbench/op_libraries.py's LIBRARIES
// (a test compares the two).
inline const std::vector<std::string> kOpLibraries = {"flag_gems", "torch_decomp"};
// The backends whose kernels a model writes during the run (generation_loop.h): llm as BackendBench's
// (5 rounds, one worker, best of all rounds kept), kernel_agent as KernelAgent's (4 workers, 10
// rounds, the first correct kernel wins). Both talk to the Anthropic or an OpenAI-compatible API.
inline const std::vector<std::string> kGeneratingBackends = {"llm", "kernel_agent"};

struct RunArguments {  // as typed; "" where not given
  std::string suite = "smoke", backend = "aten", ops, topn, device, p = "1.0", jobs, out, build, traces, salt, gpu_slots,
      cases_per_entry;
  std::optional<bool> timing;
  bool slurm = false;
  std::string slurm_tasks, slurm_gpus, slurm_args;
  // The generating backends' options (llm, kernel_agent).
  std::string model, llm_api, rounds, workers, concurrency, select, budget_tokens, budget_usd, prices, language,
      temperature, max_tokens, llm_timeout, llm_retries, record, replay;
};

// What a generating backend does before the run checks and times its kernels.
struct GenerationChoice {
  std::string backend;  // llm or kernel_agent: the label of the kernels it makes
  ModelSettings model;
  GenerationLimits limits;
  KernelLanguage language = KernelLanguage::kCpp;
  std::string record, replay;  // absolute cassette folders; "" when not given
};

// The planner's request (run_plan.h), and a generating backend's own choices, which the
// command's generation phase carries out before the planner checks and times the kernels.
struct RunRequest : RunPlan {
  std::optional<GenerationChoice> generation;  // a generating backend: its kernels become the kernel folder
};

struct RunContext {
  std::string source_directory;           // the checkout (traces/, generated_kernels/)
  std::string default_build_directory;    // the build folder this command was built in
  std::string default_torchbench_traces;  // "" when none was found
  int default_jobs = 1;
  bool cuda_available = false;
  std::string now_stamp;  // YYYYmmdd_HHMMSS, for the default --out
  bool python_kernels = false;  // the build can run .py kernels (the Python bridge)
  std::function<bool(const std::string& program)> on_path;  // whether a program is on PATH (sbatch)
  std::function<const char*(const char*)> getenv = [](const char* name) { return std::getenv(name); };
};

// Prices of models whose published prices are known here, USD per million tokens (input, output);
// nullopt for another model (--prices gives them).
std::optional<std::pair<double, double>> known_prices(const std::string& model);

// Whether an operator filter (relu, add.Tensor, aten.mul.Tensor) names an operator of the libtorch.
using OperatorKnown = std::function<bool(const std::string& filter)>;

// Checks every argument and returns the request.
RunRequest check_run_arguments(const RunArguments& arguments, const RunContext& context,
                               const OperatorKnown& operator_known);

}  // namespace backendbench::cli
