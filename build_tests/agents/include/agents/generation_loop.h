// The llm backends' generation loop: for each operator, `workers` independent chains of up to
// `rounds` candidates each. A chain asks the model (system text + prompt, kernel_prompt.h), takes
// the first fenced code block of the answer, builds and checks it alone on the feedback cases
// (candidate_bench.h), and puts what failed (compiler errors, failed cases with their messages)
// and the file into its next prompt. Chains run `concurrency` at a time across operators.
//
// Stopping: first-correct-wins ends an operator's chains at the first candidate correct on every
// feedback case; best-of-N runs every round and keeps the best. A token or cost budget, a spend
// limit or an authentication failure stops every chain before its next question (answers already
// asked for are still checked). Everything is written under the run folder:
//   attempts/<folder>/w<worker>_r<round>/  prompt.md, answer.md, response.json, the kernel, its
//                                          binding, build.log, <suite>.verdicts.jsonl, attempt.json
//   kernels/<folder>/<folder>_implementation_<N>.<ext>  the kept candidate of each operator, in the
//                                          layout the directory backend and the override library take
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/candidate_bench.h"
#include "agents/kernel_prompt.h"
#include "agents/model_client.h"

namespace backendbench::agents {

// How much the loop asks, and what it keeps.
struct GenerationLimits {
  int rounds = 5, workers = 1, concurrency = 4;
  bool first_correct_wins = false;  // else best-of-N: every round runs, the best candidate is kept
  int64_t budget_tokens = 0;        // input + output tokens; 0: none
  double budget_usd = 0;            // 0: none
  double usd_per_million_input = 0, usd_per_million_output = 0;  // 0, 0: cost unknown
};

struct GenerationRequest {
  GenerationLimits limits;
  std::string run_directory;
  std::string templates_directory, torch_version;  // for the stand-in kernel of an operator without code
};

struct GenerationOperator {
  PromptOperator prompt;
  std::vector<SuiteCases> feedback_cases;
};

struct AttemptRecord {
  std::string key;  // <folder>/w<worker>_r<round>
  int worker = 0, round = 0, number = 0;
  // model_error, no_code, harness_error, build_failed, failed, passed
  std::string outcome;
  std::string message;  // the model error, or the first failure
  int passed = 0, failed = 0, skipped = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  int model_requests = 0;  // HTTP requests the answer took (retries included)
  double model_seconds = 0, build_seconds = 0, check_seconds = 0;
  double answer_to_verdict_seconds = 0;  // from the answer's arrival to the candidate's verdict (timing excluded)
  std::optional<double> speedup;          // best-of-N: a correct candidate's geomean speedup on its timed cases
  double time_seconds = 0;
  std::string kernel_file;                // relative to the run folder
};

struct OperatorGeneration {
  std::string op, folder;
  std::vector<AttemptRecord> attempts;  // in the order they finished
  int kept = -1;                        // index into attempts; -1: no candidate had code
  std::string kernel_file;              // the kept kernel, relative to the run folder
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0, wall_seconds = 0;
  bool correct_on_feedback() const { return kept >= 0 && attempts[kept].outcome == "passed"; }
};

struct GenerationResult {
  std::vector<OperatorGeneration> operators;
  std::string stopped;  // why the run stopped asking early ("" when it did not)
  bool cost_known = false;
  double seconds = 0;
};

GenerationResult generate_kernels(const GenerationRequest& request, const std::vector<GenerationOperator>& operators,
                                  ModelClient& client, const PromptWriter& prompts, const CandidateBench& bench,
                                  const std::function<void(const std::string& line)>& progress);

// The run folder's generation.json, and run.json's "generation".
nlohmann::json generation_json(const GenerationResult& result);

}  // namespace backendbench::agents
