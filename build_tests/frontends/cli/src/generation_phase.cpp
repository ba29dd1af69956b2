// The generating backends' part of a run; see generation_phase.h.
#include "cli/generation_phase.h"

#if __has_include(<torch/headeronly/version.h>)
#include <torch/headeronly/version.h>
#else
#include <torch/version.h>
#endif

#include <algorithm>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>

#include "backendbench/files.h"
#include "backendbench/settings.h"
#include "cli/errors.h"
#include "agents/model_cassette.h"
#include "language/json_text.h"
#include "language/naming.h"
#include "model/schema.h"
#include "planner/build_steps.h"
#include "planner/text.h"
#include "schema/torch_schema.h"

namespace backendbench::cli {
namespace {

constexpr size_t kInputsShown = 12;

std::vector<GenerationOperator> operators_of(const RunRequest& request, const BuildTree& tree, std::vector<std::string>& left_out) {
  std::vector<GenerationOperator> operators;
  std::map<std::string, size_t> index;
  const schema::TorchSchemaSource schemas;
  for (const SuiteChoice& suite : request.suites) {
    for (const SuiteManifest::Operator& op : read_suite_manifest(tree.suite_manifest_path(suite.name)).operators) {
      const auto name = naming::OperatorName::from_user(op.op);
      if (!name || op.cases.empty()) continue;
      bool wanted = request.ops.empty();
      for (const std::string& filter : request.ops) wanted = wanted || naming::matches_filter(*name, filter);
      if (!wanted) continue;
      if (!index.count(op.op)) {
        const auto schema = schemas.find(*name);
        const model::KernelSignature signature = schema ? model::kernel_signature(*schema) : model::KernelSignature{};
        if (!schema || !signature.unsupported.empty()) {
          left_out.push_back(op.op + " (" + (schema ? signature.unsupported : std::string("no schema")) + ")");
          index[op.op] = SIZE_MAX;
          continue;
        }
        GenerationOperator generated;
        generated.prompt.op = op.op;
        generated.prompt.folder = name->folder();
        generated.prompt.schema = op.schema;
        generated.prompt.declaration = signature.declaration(naming::kernel_function(name->folder()));
        index[op.op] = operators.size();
        operators.push_back(generated);
      }
      if (index[op.op] == SIZE_MAX) continue;
      GenerationOperator& generated = operators[index[op.op]];
      generated.prompt.suites.push_back(suite.name);
      SuiteCases cases{suite.name, feedback_case_names(op.cases)};
      for (const SuiteManifest::Case& c : op.cases) {
        if (std::find(cases.cases.begin(), cases.cases.end(), c.name) == cases.cases.end()) continue;
        if (generated.prompt.inputs.size() < kInputsShown &&
            std::find(generated.prompt.inputs.begin(), generated.prompt.inputs.end(), c.arguments) == generated.prompt.inputs.end()) {
          generated.prompt.inputs.push_back(c.arguments);
        }
      }
      generated.feedback_cases.push_back(std::move(cases));
    }
  }
  return operators;
}

std::unique_ptr<ModelClient> client_of(const GenerationChoice& choice) {
  if (!choice.replay.empty()) return make_replay_client(choice.replay);
  const char* key = std::getenv(api_key_variable(choice.model.api));
  std::unique_ptr<ModelClient> client = make_http_client(choice.model, key != nullptr ? key : "");
  if (!choice.record.empty()) client = make_recording_client(std::move(client), choice.record);
  return client;
}

}  // namespace

std::vector<std::string> feedback_case_names(const std::vector<SuiteManifest::Case>& cases) {
  std::vector<std::string> names;
  for (size_t i = 0; i < cases.size(); i += 2) names.push_back(cases[i].name);
  return names;
}

uint64_t feedback_salt_of(uint64_t run_salt) {
  // splitmix64's finaliser of the salt plus a constant: a fixed, different salt per run salt.
  uint64_t z = run_salt + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return z == run_salt ? z + 1 : z;
}

GenerationPhase run_generation(const RunRequest& request, const BuildTree& tree, const std::string& run_directory, uint64_t run_salt,
                               const std::string& templates_directory, const std::string& logs) {
  const GenerationChoice& choice = *request.generation;
  GenerationPhase phase;
  phase.feedback_salt = feedback_salt_of(run_salt);
  std::vector<std::string> left_out;
  const std::vector<GenerationOperator> operators = operators_of(request, tree, left_out);
  for (const std::string& op : left_out) std::cout << "  left out: " << op << "\n";
  if (operators.empty()) {
    throw CliError("--ops", "no operator of the selection can be a kernel of this harness", "operators the suites have (backendbench ops --suite <suite>)");
  }
  // The kernel contract's device rule: .cu kernels get CUDA tensors, .cpp kernels CPU tensors, .py
  // kernels the run's device (CUDA when they import Triton).
  const std::string runs_on = request.device.empty() ? (cuda_available() ? "cuda" : "cpu") : request.device;
  const std::string device = choice.language == KernelLanguage::kCuda ? "cuda" : choice.language == KernelLanguage::kCpp ? "cpu" : runs_on;
  const PromptWriter prompts(templates_directory, choice.language, device, TORCH_VERSION);
  std::unique_ptr<ModelClient> client = client_of(choice);
  phase.client = client->describe();

  CandidateBenchOptions bench_options{tree, choice.limits.concurrency, choice.language, request.device, 60, templates_directory, phase.feedback_salt,
                                      choice.limits.first_correct_wins ? std::set<std::string>{} : request.timed_suites,
                                      request.sandbox, run_directory + "/attempts"};
  for (const GenerationOperator& op : operators) {
    for (const SuiteCases& suite : op.feedback_cases) {
      const std::vector<std::string>& known = bench_options.checked_suites;
      if (std::find(known.begin(), known.end(), suite.suite) == known.end()) bench_options.checked_suites.push_back(suite.suite);
    }
  }
  CandidateBench bench(bench_options);
  if (choice.language != KernelLanguage::kPython) {
    std::cout << "preparing " << choice.limits.concurrency << " candidate slots (log: " << logs << "/candidate_slots.log)\n" << std::flush;
    bench.prepare(logs + "/candidate_slots.log");
  }
  std::cout << choice.backend << ": " << operators.size() << " operators, " << choice.limits.workers << " worker(s) x " << choice.limits.rounds
            << " rounds each, " << choice.limits.concurrency << " at once, " << (choice.limits.first_correct_wins ? "first correct wins" : "best of all rounds")
            << ", " << kernel_language_name(choice.language) << " kernels; model: " << phase.client << "; feedback salt "
            << salt_text(phase.feedback_salt) << "\n"
            << std::flush;

  GenerationRequest generation;
  generation.limits = choice.limits;
  generation.run_directory = run_directory;
  generation.templates_directory = templates_directory;
  generation.torch_version = TORCH_VERSION;
  std::mutex print;
  phase.result = generate_kernels(generation, operators, *client, prompts, bench, [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(print);
    std::cout << line << "\n" << std::flush;
  });
  if (!phase.result.stopped.empty()) std::cout << "  the model was not asked again: " << phase.result.stopped << "\n";
  std::vector<std::string> kept;
  for (const OperatorGeneration& op : phase.result.operators) kept.push_back(op.kernel_file);
  std::cout << "  kept: " << joined(kept, ", ") << "\n" << std::flush;
  return phase;
}

void replay_recorded_salt(RunRequest& request) {
  if (!request.generation || request.generation->replay.empty() || request.salt_given) return;
  std::ifstream in(request.generation->replay + "/cassette.json");
  if (!in) return;
  const nlohmann::json recorded = json_text::parse_or_discarded(in);
  if (!recorded.is_object() || !recorded.contains("salt") || !recorded["salt"].is_string()) return;
  if (const auto salt = parse_salt(recorded["salt"].get<std::string>())) {
    request.salt = *salt;
    request.salt_given = true;
  }
}

void record_cassette(const GenerationChoice& choice, uint64_t salt, const std::string& command_line) {
  if (choice.record.empty()) return;
  files::make_directories(choice.record);
  files::write_whole(choice.record + "/cassette.json",
                     json_text::dump(nlohmann::json{{"schema", "backendbench-cassette"}, {"version", 1}, {"salt", salt_text(salt)}, {"command", command_line}}, 1) + "\n");
}

std::optional<GenerationPhase> generate_kernels_phase(planner::Run& run, const RunRequest& request) {
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
    return std::nullopt;
  }
  run.staging.preserve();  // from the first question on, the folder holds what the model was paid to write
  GenerationPhase phase = run_generation(request, run.tree, run.staging.path(), run.salt, run.where.templates_directory, run.logs);
  std::cout << "scoring the kept kernels on every case with the run's salt " << salt_text(run.salt) << " (the hold-out)\n";
  return phase;
}

nlohmann::json generation_run_json(const GenerationChoice& choice, const GenerationPhase& phase, uint64_t holdout_salt,
                                   const std::vector<Verdict>& verdicts) {
  nlohmann::json generation = generation_json(phase.result);
  generation["backend"] = choice.backend;
  generation["client"] = phase.client;
  generation["api"] = model_api_name(choice.model.api);
  generation["model"] = choice.model.model;
  generation["language"] = kernel_language_name(choice.language);
  generation["rounds"] = choice.limits.rounds;
  generation["workers"] = choice.limits.workers;
  generation["concurrency"] = choice.limits.concurrency;
  generation["select"] = choice.limits.first_correct_wins ? "first" : "best";
  generation["feedback_salt"] = salt_text(phase.feedback_salt);
  generation["holdout_salt"] = salt_text(holdout_salt);
  for (nlohmann::json& op : generation["operators"]) op["holdout"] = holdout_of(verdicts, op.value("operator", ""));
  return generation;
}

}  // namespace backendbench::cli
