// Checking `backendbench run`'s arguments; see run_request.h.
#include "cli/run_request.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "backendbench/files.h"
#include "backendbench/settings.h"
#include "cli/errors.h"
#include "language/naming.h"
#include "language/parser.h"
#include "planner/text.h"

namespace backendbench::cli {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(item);
    start = comma + 1;
  }
  return items;
}

bool is_directory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buffer[PATH_MAX];
  const std::string here = getcwd(buffer, sizeof(buffer)) ? buffer : ".";
  return path == "." ? here : here + "/" + path;
}

std::optional<long> whole_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) return std::nullopt;
  return std::strtol(text.c_str(), nullptr, 10);
}

bool is_trace_file(const std::string& path) {
  for (const char* extension : {".txt", ".json", ".jsonl"}) {
    const std::string suffix = extension;
    if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return true;
    }
  }
  return false;
}

const char* kSuiteForm =
    "smoke, edge, opinfo, facto, torchbench, sample, or a trace file or folder of them (.txt, .json, .jsonl), "
    "comma-separated";

// Every trace file of a suite given as a path is read before anything is built: a malformed
// line is the run's one error, at its file, line and column (exit 2), and no kernel is blamed.
void check_trace_files(const std::string& path) {
  std::vector<std::string> files;
  if (is_directory(path)) {
    for (const char* extension : {".txt", ".json", ".jsonl"}) {
      for (std::string& file : files::files_ending_with(path, extension)) files.push_back(std::move(file));
    }
  } else {
    files.push_back(path);
  }
  for (const std::string& file : files) {
    const parse::ParseResult parsed = parse::parse_trace_file(file);
    if (!parsed.errors.empty()) throw DiagnosticError(parsed.errors.front());
  }
}

SuiteChoice suite_choice(const std::string& item) {
  if (std::find(kBuiltinSuites.begin(), kBuiltinSuites.end(), item) != kBuiltinSuites.end()) {
    return {item, "", item == "smoke" || item == "torchbench" || item == "sample"};
  }
  const bool looks_like_path = item.find('/') != std::string::npos || is_trace_file(item) || exists(item);
  if (!looks_like_path) throw CliError("--suite", "unknown suite '" + item + "'", kSuiteForm);
  if (!exists(item)) throw CliError("--suite", "trace file or folder '" + item + "' does not exist", kSuiteForm);
  if (!is_directory(item) && !is_trace_file(item)) {
    throw CliError("--suite", "'" + item + "' is not a trace file", "a .txt trace, a .json or .jsonl dataset, or a folder of them");
  }
  const std::string name = naming::file_suite_name(item);
  if (std::find(kBuiltinSuites.begin(), kBuiltinSuites.end(), name) != kBuiltinSuites.end()) {
    throw CliError("--suite", "trace file '" + item + "' would be named like the built-in suite '" + name + "'",
                   "a trace file whose name is not smoke, edge, opinfo, facto, torchbench or sample");
  }
  check_trace_files(item);
  return {name, absolute(item), true};
}

std::optional<double> number_of(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A whole number option within [minimum, maximum], or its default when not given.
long whole_option(const std::string& option, const std::string& text, long fallback, long minimum, long maximum) {
  if (text.empty()) return fallback;
  const auto value = whole_number(text);
  if (!value || *value < minimum || *value > maximum) {
    throw CliError(option, "'" + text + "' is not a whole number from " + std::to_string(minimum) + " to " + std::to_string(maximum),
                   "a whole number from " + std::to_string(minimum) + " to " + std::to_string(maximum));
  }
  return *value;
}

bool is_loopback(const std::string& url) {
  for (const char* prefix : {"http://127.0.0.1", "http://localhost", "http://[::1]"}) {
    if (url.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

const char* kGenerationOnly = "the option with --backend llm or kernel_agent";

// The generating backend's options; every other backend leaves them unset.
GenerationChoice check_generation(const std::string& backend, const RunArguments& arguments, const RunContext& context,
                                  const std::string& device) {
  GenerationChoice choice;
  choice.backend = backend;
  const bool agent = backend == "kernel_agent";
  const std::string api = arguments.llm_api.empty() ? "anthropic" : arguments.llm_api;
  if (api != "anthropic" && api != "openai") {
    throw CliError("--llm-api", "unknown API '" + api + "'", "anthropic (the Messages API) or openai (chat completions: OpenAI, relays, local servers)");
  }
  choice.model.api = api == "anthropic" ? ModelApi::kAnthropic : ModelApi::kOpenAi;
  choice.model.base_url = default_base_url(choice.model.api, context.getenv);
  if (arguments.model.empty() && choice.model.api == ModelApi::kOpenAi) {
    throw CliError("--model", "no model given for --llm-api openai", "--model NAME, a model the server at " + choice.model.base_url + " serves");
  }
  choice.model.model = arguments.model.empty() ? "claude-sonnet-4-20250514" : arguments.model;
  if (!arguments.temperature.empty()) {
    const auto value = number_of(arguments.temperature);
    if (!value || *value < 0 || *value > 2) throw CliError("--temperature", "'" + arguments.temperature + "' is not a temperature", "a number from 0 to 2");
    choice.model.temperature = *value;
  }
  choice.model.max_tokens = static_cast<int>(whole_option("--max-tokens", arguments.max_tokens, 8000, 1, 1000000));
  if (!arguments.llm_timeout.empty()) {
    const auto value = number_of(arguments.llm_timeout);
    if (!value || *value <= 0) throw CliError("--llm-timeout", "'" + arguments.llm_timeout + "' is not a number of seconds", "a number of seconds above 0");
    choice.model.timeout_seconds = *value;
  }
  choice.model.max_attempts = 1 + static_cast<int>(whole_option("--llm-retries", arguments.llm_retries, 3, 0, 100));
  choice.limits.rounds = static_cast<int>(whole_option("--rounds", arguments.rounds, agent ? 10 : 5, 1, 1000));
  choice.limits.workers = static_cast<int>(whole_option("--workers", arguments.workers, agent ? 4 : 1, 1, 64));
  choice.limits.concurrency = static_cast<int>(whole_option("--concurrency", arguments.concurrency, std::max(4, choice.limits.workers), 1, 64));
  const std::string select = arguments.select.empty() ? (agent ? "first" : "best") : arguments.select;
  if (select != "first" && select != "best") {
    throw CliError("--select", "unknown selection '" + select + "'", "first (the first correct kernel wins) or best (every round runs, the best is kept)");
  }
  choice.limits.first_correct_wins = select == "first";
  choice.limits.budget_tokens = whole_option("--budget-tokens", arguments.budget_tokens, 0, 1, 999999999);
  if (const auto prices = known_prices(choice.model.model)) std::tie(choice.limits.usd_per_million_input, choice.limits.usd_per_million_output) = *prices;
  if (!arguments.prices.empty()) {
    const std::vector<std::string> parts = split_list(arguments.prices);
    const auto in = parts.size() == 2 ? number_of(parts[0]) : std::nullopt;
    const auto out = parts.size() == 2 ? number_of(parts[1]) : std::nullopt;
    if (!in || !out || *in < 0 || *out < 0) {
      throw CliError("--prices", "'" + arguments.prices + "' is not two prices", "INPUT,OUTPUT in US dollars per million tokens, e.g. 3,15");
    }
    choice.limits.usd_per_million_input = *in;
    choice.limits.usd_per_million_output = *out;
  }
  if (!arguments.budget_usd.empty()) {
    const auto value = number_of(arguments.budget_usd);
    if (!value || *value <= 0) throw CliError("--budget-usd", "'" + arguments.budget_usd + "' is not an amount", "US dollars above 0, e.g. 5");
    if (choice.limits.usd_per_million_input == 0 && choice.limits.usd_per_million_output == 0) {
      throw CliError("--budget-usd", "the prices of model '" + choice.model.model + "' are not known here", "--prices INPUT,OUTPUT (US dollars per million tokens) with it");
    }
    choice.limits.budget_usd = *value;
  }
  // Without --device, the run uses CUDA where there is a GPU: C++ kernels where there is none.
  const std::string runs_on = device.empty() ? (context.cuda_available ? "cuda" : "cpu") : device;
  const std::string language = arguments.language.empty() ? (runs_on == "cuda" ? "cuda" : "cpp") : arguments.language;
  const auto chosen = kernel_language_named(language);
  if (!chosen) throw CliError("--language", "unknown kernel language '" + language + "'", "cpp, cuda, or python (triton)");
  if (*chosen == KernelLanguage::kCuda && runs_on != "cuda") {
    throw CliError("--language", "CUDA kernels run on CUDA tensors", "--device cuda with --language cuda, or --language cpp");
  }
  if (*chosen == KernelLanguage::kPython && !context.python_kernels) {
    throw CliError("--language", "this build cannot run .py kernels (no embeddable Python)", "cpp, or a build with BACKENDBENCH_PYTHON");
  }
  choice.language = *chosen;
  if (!arguments.record.empty() && !arguments.replay.empty()) {
    throw CliError("--replay", "both --record and --replay given", "one of them: --record DIR saves the model's answers, --replay DIR answers from them");
  }
  if (!arguments.replay.empty()) {
    if (!is_directory(arguments.replay)) throw CliError("--replay", "cassette '" + arguments.replay + "' does not exist", "a folder written by --record");
    choice.replay = absolute(arguments.replay);
  }
  if (!arguments.record.empty()) choice.record = absolute(arguments.record);
  const char* key = context.getenv(api_key_variable(choice.model.api));
  if (choice.replay.empty() && (key == nullptr || *key == '\0') && !is_loopback(choice.model.base_url)) {
    throw CliError("--backend", std::string(backend) + " needs " + api_key_variable(choice.model.api) + " in the environment (" +
                                    choice.model.base_url + ")",
                   std::string("a key in ") + api_key_variable(choice.model.api) + ", a server on loopback (" +
                       (choice.model.api == ModelApi::kAnthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL") + "), or --replay DIR");
  }
  return choice;
}

}  // namespace

std::optional<std::pair<double, double>> known_prices(const std::string& model) {
  // Anthropic's published prices (US dollars per million input, output tokens).
  if (model.rfind("claude-sonnet-4", 0) == 0 || model.rfind("claude-3-7-sonnet", 0) == 0 || model.rfind("claude-3-5-sonnet", 0) == 0) {
    return std::make_pair(3.0, 15.0);
  }
  return std::nullopt;
}

RunRequest check_run_arguments(const RunArguments& arguments, const RunContext& context,
                               const OperatorKnown& operator_known) {
  RunRequest request;
  const std::vector<std::string> suites = split_list(arguments.suite);
  if (suites.empty()) throw CliError("--suite", "no suite given", kSuiteForm);
  for (const std::string& item : suites) {
    SuiteChoice choice = suite_choice(item);
    for (const SuiteChoice& earlier : request.suites) {
      if (earlier.name == choice.name) throw CliError("--suite", "suite '" + choice.name + "' given twice", "each suite once");
    }
    request.suites.push_back(choice);
  }

  const char* backend_form =
      "aten, directory (generated_kernels/), a kernel folder (<op>/<op>_implementation_<N>.cpp|.cu|.py), an op "
      "library (flag_gems, torch_decomp), or a model writing the kernels (llm, kernel_agent), comma-separated";
  const std::vector<std::string> backends = split_list(arguments.backend);
  if (backends.empty()) throw CliError("--backend", "no backend given", backend_form);
  std::string generating;
  for (const std::string& item : backends) {
    if (item == "aten") {
      request.aten = true;
      continue;
    }
    if (std::find(kGeneratingBackends.begin(), kGeneratingBackends.end(), item) != kGeneratingBackends.end()) {
      if (!generating.empty()) {
        throw CliError("--backend", "two generating backends ('" + generating + "' and '" + item + "')", "one of llm or kernel_agent");
      }
      generating = item;
      continue;
    }
    if (std::find(kOpLibraries.begin(), kOpLibraries.end(), item) != kOpLibraries.end()) {
      if (std::find(request.op_libraries.begin(), request.op_libraries.end(), item) != request.op_libraries.end()) {
        throw CliError("--backend", "op library '" + item + "' given twice", "each backend once");
      }
      request.op_libraries.push_back(item);
      continue;
    }
    std::string directory, label;
    if (item == "directory") {
      directory = context.source_directory + "/generated_kernels";
      label = "directory";
    } else if (item.find('/') != std::string::npos || exists(item)) {
      if (!is_directory(item)) throw CliError("--backend", "kernel folder '" + item + "' does not exist", backend_form);
      directory = absolute(item);
      label = item;
    } else {
      throw CliError("--backend", "unknown backend '" + item + "'", backend_form);
    }
    if (!request.kernels_directory.empty()) {
      throw CliError("--backend", "two kernel folders ('" + request.kernels_label + "' and '" + item + "')",
                     "at most one of directory or a kernel folder, with or without aten");
    }
    request.kernels_directory = directory;
    request.kernels_label = label;
  }

  if (!generating.empty() && !request.kernels_directory.empty()) {
    throw CliError("--backend", generating + " writes the kernels under test, and '" + request.kernels_label + "' is a kernel folder too",
                   generating + " alone, or with aten and op libraries");
  }

  request.ops = split_list(arguments.ops);
  for (const std::string& filter : request.ops) {
    if (!operator_known(filter)) {
      throw CliError("--ops", "unknown operator '" + filter + "'",
                     "ATen operators of the installed libtorch, comma-separated: a base name (relu, add) or an "
                     "overload (add.Tensor, aten.mul.Tensor)");
    }
  }

  const bool has_file_suite =
      std::any_of(request.suites.begin(), request.suites.end(), [](const SuiteChoice& s) { return !s.traces.empty(); });
  const bool has_torchbench =
      std::any_of(request.suites.begin(), request.suites.end(), [](const SuiteChoice& s) { return s.name == "torchbench"; });
  if (!arguments.topn.empty()) {
    const auto topn = whole_number(arguments.topn);
    if (!topn || *topn < 1) throw CliError("--topn", "'" + arguments.topn + "' is not a number of inputs", "a whole number of at least 1");
    if (!has_torchbench && !has_file_suite) {
      throw CliError("--topn", "--topn keeps the largest inputs of TorchBench traces",
                     "--topn with --suite torchbench or a trace file");
    }
    request.topn = static_cast<int>(*topn);
  }
  if (has_torchbench) {
    request.torchbench_traces = arguments.traces.empty() ? context.default_torchbench_traces : absolute(arguments.traces);
    if (request.torchbench_traces.empty() || !is_directory(request.torchbench_traces)) {
      throw CliError("--traces",
                     request.torchbench_traces.empty() ? "no TorchBench traces found"
                                                       : "'" + request.torchbench_traces + "' is not a folder",
                     "the folder of TorchBench's operator traces (PyTorch's "
                     "benchmarks/dynamo/microbenchmarks/operator_inp_logs), given with --traces");
    }
  }

  if (!arguments.device.empty() && arguments.device != "cpu" && arguments.device != "cuda") {
    throw CliError("--device", "unknown device '" + arguments.device + "'", "cpu or cuda");
  }
  // With --slurm the GPUs are the compute nodes', not this machine's.
  if (arguments.device == "cuda" && !context.cuda_available && !arguments.slurm) {
    throw CliError("--device", "no CUDA device on this machine", "cpu here, or cuda on a machine with a GPU");
  }
  request.device = arguments.device;
  if (!generating.empty()) {
    request.generation = check_generation(generating, arguments, context, request.device);
    request.kernels_label = generating;
    request.kernels_written_during_run = true;
    request.candidate_slots = request.generation->limits.concurrency;
  } else {
    for (const auto& [option, value] : {std::pair{"--model", arguments.model}, {"--llm-api", arguments.llm_api}, {"--rounds", arguments.rounds},
                                        {"--workers", arguments.workers}, {"--concurrency", arguments.concurrency}, {"--select", arguments.select},
                                        {"--budget-tokens", arguments.budget_tokens}, {"--budget-usd", arguments.budget_usd},
                                        {"--prices", arguments.prices}, {"--language", arguments.language},
                                        {"--temperature", arguments.temperature}, {"--max-tokens", arguments.max_tokens},
                                        {"--llm-timeout", arguments.llm_timeout}, {"--llm-retries", arguments.llm_retries},
                                        {"--record", arguments.record}, {"--replay", arguments.replay}}) {
      if (!value.empty()) throw CliError(option, std::string(option) + " only applies to a model writing the kernels", kGenerationOnly);
    }
  }

  char* end = nullptr;
  request.p = std::strtod(arguments.p.c_str(), &end);
  if (arguments.p.empty() || *end != '\0' || !std::isfinite(request.p) || request.p < 0) {
    throw CliError("--p", "'" + arguments.p + "' is not a speedup threshold", "a number of at least 0, e.g. 1.5");
  }
  if (arguments.jobs.empty()) {
    request.jobs = context.default_jobs;
  } else {
    const auto jobs = whole_number(arguments.jobs);
    if (!jobs || *jobs < 1) throw CliError("-j", "'" + arguments.jobs + "' is not a number of jobs", "a whole number of at least 1");
    request.jobs = static_cast<int>(*jobs);
  }
  // A whole number from `low` to `high` given as `option`, or one located error.
  const auto number_in = [](const char* option, const std::string& text, long low, long high, const std::string& what,
                            const std::string& expected) {
    const auto value = whole_number(text);
    if (!value || *value < low || *value > high) throw CliError(option, "'" + text + "' is not " + what, expected);
    return static_cast<int>(*value);
  };
  if (!arguments.gpu_slots.empty()) {
    request.gpu_slots = number_in("--gpu-slots", arguments.gpu_slots, 1, 1024, "a number of entries per GPU",
                                  "a whole number from 1 to 1024");
  }
  if (arguments.slurm) {
    SlurmChoice slurm;
    if (!arguments.slurm_tasks.empty()) {
      slurm.tasks = number_in("--slurm-tasks", arguments.slurm_tasks, 1, 100000, "a number of array tasks",
                              "a whole number from 1 to 100000");
    }
    slurm.gpus_per_task = request.device == "cuda" ? 1 : 0;
    if (!arguments.slurm_gpus.empty()) {
      slurm.gpus_per_task = number_in("--slurm-gpus", arguments.slurm_gpus, 0, 1024, "a number of GPUs", "a whole number, 0 for none");
    }
    std::istringstream words(arguments.slurm_args);
    for (std::string word; words >> word;) slurm.sbatch_arguments.push_back(word);
    if (context.on_path && !context.on_path("sbatch")) {
      throw CliError("--slurm", "sbatch is not on PATH", "Slurm's client commands (Debian's slurm-client) on this machine");
    }
    request.slurm = slurm;
  } else if (!arguments.slurm_tasks.empty() || !arguments.slurm_gpus.empty() || !arguments.slurm_args.empty()) {
    throw CliError(!arguments.slurm_tasks.empty() ? "--slurm-tasks" : !arguments.slurm_gpus.empty() ? "--slurm-gpus" : "--slurm-args",
                   "a Slurm option without --slurm", "--slurm with it");
  }
  if (!arguments.cases_per_entry.empty()) {
    request.cases_per_entry = number_in("--cases-per-entry", arguments.cases_per_entry, 0, 100000000, "a number of cases",
                                        "a whole number, 0 for one entry per operator");
  }

  for (const SuiteChoice& suite : request.suites) {
    if (arguments.timing.value_or(suite.timed_by_default)) request.timed_suites.insert(suite.name);
  }

  if (!arguments.salt.empty()) {
    const auto salt = parse_salt(arguments.salt);
    if (!salt) throw CliError("--salt", "'" + arguments.salt + "' is not a salt", "0x and up to 16 hexadecimal digits, or a decimal number");
    request.salt = *salt;
    request.salt_given = true;
  }
  request.build = arguments.build.empty() ? context.default_build_directory : absolute(arguments.build);
  request.out = absolute(arguments.out.empty() ? "backendbench_output_" + context.now_stamp : arguments.out);
  if (exists(request.out)) {
    if (!is_directory(request.out) || !exists(request.out + "/run.json")) {
      throw CliError("--out", "'" + request.out + "' exists and is not a results folder of an earlier run",
                     "a new folder, or an earlier run's results folder (it holds run.json), which is replaced");
    }
  }
  const std::string parent = request.out.substr(0, request.out.find_last_of('/'));
  if (!is_directory(parent.empty() ? "/" : parent)) {
    throw CliError("--out", "the folder '" + parent + "' does not exist", "--out inside an existing folder");
  }
  return request;
}

}  // namespace backendbench::cli
