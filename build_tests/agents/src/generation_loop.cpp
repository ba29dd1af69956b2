// The generation loop; see generation_loop.h.
#include "agents/generation_loop.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "backendbench/files.h"
#include "agents/model_cassette.h"
#include "agents/scaffold.h"
#include "language/json_text.h"
#include "language/naming.h"
#include "schema/torch_schema.h"
#include "planner/process.h"

namespace backendbench::agents {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

using planner::seconds_since;

constexpr size_t kFailuresShown = 5;

// What the next prompt of the chain says about this candidate.
PreviousAttempt previous_of(int round, const std::string& code, const CandidateResult& result) {
  PreviousAttempt previous;
  previous.round = round;
  previous.code = code;
  if (result.stage == CandidateResult::Stage::kBuildFailed) {
    previous.outcome = "did not compile:";
    std::string errors;
    for (const std::string& line : result.build_errors) errors += line + "\n";
    previous.failures.push_back(errors);
    return previous;
  }
  previous.passed = result.correct();
  if (previous.passed) {
    previous.outcome = "passed all " + std::to_string(result.cases()) + " of its cases.";
    if (result.speedup) {
      char speed[128];
      std::snprintf(speed, sizeof(speed), " It ran at %.3fx ATen's speed (geomean of %d timed cases).", *result.speedup, result.timed_cases);
      previous.outcome += speed;
    }
    return previous;
  }
  if (result.passed + result.failed == 0) {
    previous.outcome = "ran no case: every one was skipped (" +
                       (result.verdicts.empty() ? std::string("none") : result.verdicts.front().skip_reason) + ").";
    return previous;
  }
  previous.outcome = "failed " + std::to_string(result.failed) + " of " + std::to_string(result.cases()) + " cases:";
  for (const Verdict& verdict : result.verdicts) {
    if (verdict.status != Verdict::Status::kFailed || previous.failures.size() >= kFailuresShown) continue;
    // The messages name the case, its arguments and where it is traced.
    std::string text = "- " + verdict.suite + ":";
    for (size_t i = 0; i < verdict.errors.size() && i < 3; ++i) text += (i == 0 ? " " : "\n  ") + verdict.errors[i];
    previous.failures.push_back(text);
  }
  if (result.failed > static_cast<int>(kFailuresShown)) {
    previous.failures.push_back("(and " + std::to_string(result.failed - static_cast<int>(kFailuresShown)) + " more)");
  }
  return previous;
}

std::string outcome_of(const CandidateResult& result) {
  if (result.stage == CandidateResult::Stage::kBuildFailed) return "build_failed";
  return result.correct() ? "passed" : "failed";
}

std::string first_failure(const CandidateResult& result) {
  if (result.stage == CandidateResult::Stage::kBuildFailed) {
    for (const std::string& line : result.build_errors) {
      if (line.find("error") != std::string::npos) return line;
    }
    return result.build_errors.empty() ? "" : result.build_errors.front();
  }
  for (const Verdict& verdict : result.verdicts) {
    if (verdict.status == Verdict::Status::kFailed && !verdict.errors.empty()) return verdict.errors.front();
  }
  return "";
}

Json attempt_json(const AttemptRecord& attempt) {
  return {{"key", attempt.key},
          {"worker", attempt.worker},
          {"round", attempt.round},
          {"number", attempt.number},
          {"backend", naming::variant_name(attempt.number)},
          {"outcome", attempt.outcome},
          {"message", attempt.message},
          {"passed", attempt.passed},
          {"failed", attempt.failed},
          {"skipped", attempt.skipped},
          {"input_tokens", attempt.input_tokens},
          {"output_tokens", attempt.output_tokens},
          {"model_requests", attempt.model_requests},
          {"model_seconds", attempt.model_seconds},
          {"build_seconds", attempt.build_seconds},
          {"check_seconds", attempt.check_seconds},
          {"answer_to_verdict_seconds", attempt.answer_to_verdict_seconds},
          {"speedup", attempt.speedup ? Json(*attempt.speedup) : Json()},
          {"time_seconds", attempt.time_seconds},
          {"kernel_file", attempt.kernel_file}};
}

// Which attempt an operator keeps: among correct ones the fastest where they were timed (best-of-N),
// else the earliest; without a correct one, the one passing the most cases, ties to the later round
// (it saw the most feedback); only attempts with code.
int kept_attempt(const std::vector<AttemptRecord>& attempts) {
  int best = -1;
  auto rank = [](const AttemptRecord& a) {
    const double cases = a.passed + a.failed;
    return std::make_tuple(a.outcome == "passed" ? 1 : 0, cases > 0 ? a.passed / cases : -1.0, a.outcome == "build_failed" ? 0 : 1);
  };
  for (int i = 0; i < static_cast<int>(attempts.size()); ++i) {
    const AttemptRecord& a = attempts[i];
    if (a.kernel_file.empty()) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    const AttemptRecord& b = attempts[best];
    if (a.outcome == "passed" && b.outcome == "passed" && a.speedup && b.speedup) {
      if (*a.speedup > *b.speedup) best = i;  // best-of-N: the fastest correct candidate
      continue;
    }
    const auto ra = rank(a), rb = rank(b);
    const bool earlier = std::make_pair(a.round, a.worker) < std::make_pair(b.round, b.worker);
    if (ra > rb || (ra == rb && std::get<0>(ra) == 1 && earlier) || (ra == rb && std::get<0>(ra) == 0 && !earlier)) best = i;
  }
  return best;
}

}  // namespace

GenerationResult generate_kernels(const GenerationRequest& request, const std::vector<GenerationOperator>& operators,
                                  ModelClient& client, const PromptWriter& prompts, const CandidateBench& bench,
                                  const std::function<void(const std::string&)>& progress) {
  const auto start = Clock::now();
  GenerationResult result;
  result.cost_known = request.limits.usd_per_million_input > 0 || request.limits.usd_per_million_output > 0;
  result.operators.resize(operators.size());
  std::vector<Clock::time_point> first_question(operators.size(), Clock::time_point::max());
  std::vector<Clock::time_point> last_verdict(operators.size(), start);
  std::vector<char> solved(operators.size(), 0);
  for (size_t i = 0; i < operators.size(); ++i) {
    result.operators[i].op = operators[i].prompt.op;
    result.operators[i].folder = operators[i].prompt.folder;
  }
  std::mutex mutex;  // guards result, solved, the totals and `stopped`
  int64_t tokens = 0;
  double cost = 0;
  auto cost_of = [&](int64_t in, int64_t out) {
    return in * request.limits.usd_per_million_input / 1e6 + out * request.limits.usd_per_million_output / 1e6;
  };
  // Whether a chain may ask its next question; sets `stopped` once a budget is spent.
  auto may_ask = [&](size_t op) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!result.stopped.empty()) return false;
    if (request.limits.first_correct_wins && solved[op]) return false;
    if (request.limits.budget_tokens > 0 && tokens >= request.limits.budget_tokens) {
      result.stopped = "the token budget (--budget-tokens " + std::to_string(request.limits.budget_tokens) + ") is spent: " +
                       std::to_string(tokens) + " tokens";
    } else if (request.limits.budget_usd > 0 && cost >= request.limits.budget_usd) {
      result.stopped = "the cost budget (--budget-usd) is spent: $" + std::to_string(cost);
    }
    if (!result.stopped.empty()) progress("  stopping: " + result.stopped);
    return result.stopped.empty();
  };

  struct Chain {
    size_t op;
    int worker;
  };
  std::vector<Chain> chains;
  for (size_t op = 0; op < operators.size(); ++op) {
    for (int worker = 1; worker <= request.limits.workers; ++worker) chains.push_back({op, worker});
  }
  std::atomic<size_t> next_chain{0};
  auto run_chains = [&](int slot) {
    for (size_t index = next_chain++; index < chains.size(); index = next_chain++) {
      const Chain chain = chains[index];
      const GenerationOperator& op = operators[chain.op];
      const std::string& folder = op.prompt.folder;
      std::optional<PreviousAttempt> previous;
      for (int round = 1; round <= request.limits.rounds; ++round) {
        if (!may_ask(chain.op)) break;
        AttemptRecord attempt;
        attempt.worker = chain.worker;
        attempt.round = round;
        attempt.number = (round - 1) * request.limits.workers + chain.worker;
        attempt.key = folder + "/w" + std::to_string(chain.worker) + "_r" + std::to_string(round);
        const std::string directory = request.run_directory + "/attempts/" + attempt.key;
        files::make_directories(directory);
        const ModelRequest question{attempt.key, prompts.system(op.prompt), prompts.prompt(op.prompt, previous)};
        files::write_whole(directory + "/prompt.md", "# system\n\n" + question.system + "\n# prompt\n\n" + question.prompt);
        {
          std::lock_guard<std::mutex> lock(mutex);
          first_question[chain.op] = std::min(first_question[chain.op], Clock::now());
        }
        const auto asked = Clock::now();
        std::optional<ModelAnswer> answer;
        try {
          answer = client.ask(question);
        } catch (const ModelError& error) {
          attempt.outcome = "model_error";
          attempt.message = error.what();
          attempt.model_seconds = seconds_since(asked);
          files::write_whole(directory + "/attempt.json", json_text::dump(attempt_json(attempt), 1) + "\n");
          progress("  " + op.prompt.op + " worker " + std::to_string(chain.worker) + " round " + std::to_string(round) +
                   ": model error: " + error.what());
          std::lock_guard<std::mutex> lock(mutex);
          result.operators[chain.op].attempts.push_back(attempt);
          if (error.stops_the_run() && result.stopped.empty()) result.stopped = error.what();
          continue;
        }
        const auto answered = Clock::now();
        attempt.model_seconds = answer->seconds;
        attempt.model_requests = answer->attempts;
        attempt.input_tokens = answer->input_tokens;
        attempt.output_tokens = answer->output_tokens;
        files::write_whole(directory + "/answer.md", answer->text);
        files::write_whole(directory + "/response.json", answer->response_body.empty() ? "{}\n" : answer->response_body + "\n");
        {
          std::lock_guard<std::mutex> lock(mutex);
          tokens += answer->input_tokens + answer->output_tokens;
          cost += cost_of(answer->input_tokens, answer->output_tokens);
        }
        const std::optional<std::string> code = first_fenced_block(answer->text);
        if (!code) {
          attempt.outcome = "no_code";
          attempt.message = answer->stop_reason == "max_tokens" || answer->stop_reason == "length"
                                ? "the answer was cut at --max-tokens before its code block ended"
                                : "the answer had no fenced code block";
          previous = PreviousAttempt{round, "had no complete fenced code block, so nothing could be built.", {}, "", false};
        } else {
          CandidateResult checked;
          try {
            checked = bench.check(slot, directory, folder, attempt.number, *code, op.feedback_cases);
          } catch (const std::exception& error) {
            // The harness could not build or run it (a file it could not write, ...): this round
            // is lost, not the run.
            attempt.outcome = "harness_error";
            attempt.message = error.what();
            files::write_whole(directory + "/attempt.json", json_text::dump(attempt_json(attempt), 1) + "\n");
            progress("  " + op.prompt.op + " worker " + std::to_string(chain.worker) + " round " + std::to_string(round) +
                     ": harness error: " + error.what());
            std::lock_guard<std::mutex> lock(mutex);
            result.operators[chain.op].attempts.push_back(attempt);
            continue;
          }
          attempt.outcome = outcome_of(checked);
          attempt.message = first_failure(checked);
          attempt.passed = checked.passed;
          attempt.failed = checked.failed;
          attempt.skipped = checked.skipped;
          attempt.build_seconds = checked.build_seconds;
          attempt.check_seconds = checked.check_seconds;
          attempt.answer_to_verdict_seconds = seconds_since(answered) - checked.time_seconds;
          attempt.speedup = checked.speedup;
          attempt.time_seconds = checked.time_seconds;
          attempt.kernel_file = checked.kernel_file.substr(request.run_directory.size() + 1);
          previous = previous_of(round, *code, checked);
        }
        files::write_whole(directory + "/attempt.json", json_text::dump(attempt_json(attempt), 1) + "\n");
        progress("  " + op.prompt.op + " worker " + std::to_string(chain.worker) + " round " + std::to_string(round) + ": " +
                 attempt.outcome + (attempt.passed + attempt.failed > 0
                                        ? " (" + std::to_string(attempt.passed) + " of " + std::to_string(attempt.passed + attempt.failed) + " cases)"
                                        : "") +
                 (attempt.answer_to_verdict_seconds > 0 ? ", verdict " + std::to_string(attempt.answer_to_verdict_seconds).substr(0, 4) + " s after the answer" : "") +
                 (attempt.speedup ? ", speedup " + std::to_string(*attempt.speedup).substr(0, 5) + "x" : ""));
        std::lock_guard<std::mutex> lock(mutex);
        result.operators[chain.op].attempts.push_back(attempt);
        last_verdict[chain.op] = std::max(last_verdict[chain.op], Clock::now());
        if (attempt.outcome == "passed") solved[chain.op] = 1;
      }
    }
  };
  // An error escaping a chain (a folder it cannot write) stops every chain instead of the process.
  auto guarded = [&](int slot) {
    try {
      run_chains(slot);
    } catch (const std::exception& error) {
      std::lock_guard<std::mutex> lock(mutex);
      if (result.stopped.empty()) result.stopped = std::string("harness error: ") + error.what();
    }
  };
  std::vector<std::thread> threads;
  const int concurrency = std::max(1, std::min<int>(request.limits.concurrency, static_cast<int>(chains.size())));
  for (int slot = 0; slot < concurrency; ++slot) threads.emplace_back(guarded, slot);
  for (std::thread& thread : threads) thread.join();

  // The kept candidate of each operator, into kernels/ (an operator without one gets a stand-in
  // that fails every case saying so, so that it scores as the failure it is).
  for (size_t i = 0; i < result.operators.size(); ++i) {
    OperatorGeneration& generated = result.operators[i];
    for (const AttemptRecord& attempt : generated.attempts) {
      generated.input_tokens += attempt.input_tokens;
      generated.output_tokens += attempt.output_tokens;
    }
    generated.cost_usd = cost_of(generated.input_tokens, generated.output_tokens);
    if (first_question[i] != Clock::time_point::max()) {
      generated.wall_seconds = std::chrono::duration<double>(last_verdict[i] - first_question[i]).count();
    }
    generated.kept = kept_attempt(generated.attempts);
    const std::string folder = request.run_directory + "/kernels/" + generated.folder;
    files::make_directories(folder);
    if (generated.kept >= 0) {
      const AttemptRecord& kept = generated.attempts[generated.kept];
      const std::string source = request.run_directory + "/" + kept.kernel_file;
      const std::string name = source.substr(source.find_last_of('/') + 1);
      std::ifstream in(source, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      files::write_whole(folder + "/" + name, text.str());
      generated.kernel_file = "kernels/" + generated.folder + "/" + name;
    } else if (bench.options().language == KernelLanguage::kPython) {
      const std::string name = naming::implementation_stem(generated.folder, 1) + ".py";
      files::write_whole(folder + "/" + name, "# backendbench run: the model gave no code for " + generated.op + "\n\ndef " +
                                                  naming::kernel_function(generated.folder) +
                                                  "(*args, **kwargs):\n    raise NotImplementedError(\"the model gave no code for " +
                                                  generated.op + "\")\n");
      generated.kernel_file = "kernels/" + generated.folder + "/" + name;
    } else {
      const ScaffoldedKernel stand_in =
          scaffold_kernel(generated.op, request.run_directory + "/kernels", bench.options().language == KernelLanguage::kCuda,
                          schema::TorchSchemaSource(), request.templates_directory, request.torch_version);
      write_scaffold(stand_in);
      generated.kernel_file = stand_in.path.substr(request.run_directory.size() + 1);
    }
  }
  result.seconds = seconds_since(start);
  const Json json = generation_json(result);
  files::write_whole(request.run_directory + "/generation.json", json_text::dump(json, 1) + "\n");
  return result;
}

Json generation_json(const GenerationResult& result) {
  Json operators = Json::array();
  int64_t input = 0, output = 0;
  double cost = 0;
  for (const OperatorGeneration& op : result.operators) {
    Json attempts = Json::array();
    for (const AttemptRecord& attempt : op.attempts) attempts.push_back(attempt_json(attempt));
    operators.push_back({{"operator", op.op},
                         {"folder", op.folder},
                         {"kept", op.kept >= 0 ? Json(op.attempts[op.kept].key) : Json()},
                         {"kernel_file", op.kernel_file},
                         {"correct_on_feedback", op.correct_on_feedback()},
                         {"input_tokens", op.input_tokens},
                         {"output_tokens", op.output_tokens},
                         {"cost_usd", result.cost_known ? Json(op.cost_usd) : Json()},
                         {"wall_seconds", op.wall_seconds},
                         {"attempts", attempts}});
    input += op.input_tokens;
    output += op.output_tokens;
    cost += op.cost_usd;
  }
  return {{"schema", "backendbench-generation"},
          {"version", 1},
          {"stopped", result.stopped},
          {"seconds", result.seconds},
          {"input_tokens", input},
          {"output_tokens", output},
          {"cost_usd", result.cost_known ? Json(cost) : Json()},
          {"operators", operators}};
}

}  // namespace backendbench::agents
