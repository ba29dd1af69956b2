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

namespace backendbench::cli {

// The command stands on the rooms below it: the llm and kernel_agent loops, and the build service.
using namespace backendbench::agents;  // NOLINT(google-build-using-namespace)
using namespace backendbench::build;   // NOLINT(google-build-using-namespace)

// The built-in suites, in the order `--help` lists them.
inline const std::vector<std::string> kBuiltinSuites = {"smoke", "edge", "opinfo", "facto", "torchbench", "sample"};
// The Python op libraries a backend may name: python/backendbench/op_libraries.py's LIBRARIES
// (a test compares the two).
inline const std::vector<std::string> kOpLibraries = {"flag_gems", "torch_decomp"};
// The backends whose kernels a model writes during the run (generation_loop.h): llm as BackendBench's
// (5 rounds, one worker, best of all rounds kept), kernel_agent as KernelAgent's (4 workers, 10
// rounds, the first correct kernel wins). Both talk to the Anthropic or an OpenAI-compatible API.
inline const std::vector<std::string> kGeneratingBackends = {"llm", "kernel_agent"};

// Correctness entries that run at once on one GPU when --gpu-slots is not given (README, "Every
// GPU of a machine": measured on an H200).
inline constexpr int kDefaultGpuSlots = 4;

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

// Running the entries as Slurm array tasks (README, "Many hosts, with Slurm").
struct SlurmChoice {
  int tasks = 4;                         // array tasks; task k runs entries k+1, k+1+tasks, ... of each phase
  int gpus_per_task = 0;                 // --gres=gpu:<n>; 0: none (a CPU run)
  std::vector<std::string> sbatch_arguments;  // the user's own (partition, account, time), before ours
};

struct SuiteChoice {
  std::string name;    // smoke, ..., or a file suite's name (naming::file_suite_name)
  std::string traces;  // a file suite's trace file or folder (absolute); "" for a built-in one
  bool timed_by_default = false;  // smoke, torchbench and trace files; not edge, opinfo or facto (no timing there in the original)
};

struct RunRequest {
  std::vector<SuiteChoice> suites;
  bool aten = false;                // the reference as the backend under test
  std::string kernels_directory;    // absolute; "" when only aten runs
  std::string kernels_label;        // "directory" or the kernel folder as typed
  std::vector<std::string> op_libraries;  // Python op libraries under test (kOpLibraries)
  std::vector<std::string> ops;     // filters (naming::matches_filter); empty: all
  int topn = 0;
  std::string device;               // "", "cpu" or "cuda"
  std::set<std::string> timed_suites;  // --timing: all; --no-timing: none; else those timed by default
  double p = 1.0;
  int jobs = 1;
  int gpu_slots = kDefaultGpuSlots;  // correctness entries at once on one GPU (CTest's resource spec)
  std::optional<int> cases_per_entry;  // split larger jobs into parts (job.h); unset: the build's setting
  std::optional<SlurmChoice> slurm;    // the entries run as Slurm array tasks, not here
  std::string out;                  // absolute
  std::string build;                // absolute
  std::string torchbench_traces;    // absolute; "" when the torchbench suite is not selected
  uint64_t salt = 0;                // mixed into every input draw; random unless given
  bool salt_given = false;
  bool sandbox = true;              // kernel workers in bubblewrap; false only with --no-sandbox
  bool kernels_must_compute = false;  // --kernels-must-compute: the strict policy (settings.h)
  bool pack_small_jobs = true;      // small correctness jobs share an entry (entry_packs.h); false with --one-job-per-entry
  // Correctness entries served by supervisors kept across the phase (build_service's
  // entry_servers.h); false with --process-per-entry (each entry its own test executable).
  bool entry_servers = true;
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

// Operators in `ops` that select nothing in any of the suites' operator lists (display names).
std::vector<std::string> unmatched_filters(const std::vector<std::string>& ops,
                                           const std::vector<std::string>& suite_operators);

}  // namespace backendbench::cli
