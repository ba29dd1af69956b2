// The reward API; see reward.h.
#include "agents/reward.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <thread>

#include "backendbench/files.h"
#include "backendbench/json_numbers.h"
#include "language/json_text.h"
#include "planner/run_scores.h"
#include "language/diagnostic.h"
#include "language/naming.h"
#include "planner/process.h"

namespace backendbench::agents {

namespace {

using Clock = std::chrono::steady_clock;

using planner::seconds_since;

}  // namespace

RewardCandidate reward_candidate_from_json(const std::string& text, const std::string& where) {
  nlohmann::json item;
  try {
    item = json_text::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    throw error_at(where, std::string("not JSON (") + error.what() + ")",
                   R"(one object per line: {"id": ..., "op": "relu", "language": "cpp", "source": "..."})");
  }
  if (!item.is_object()) throw error_at(where, "not a JSON object", R"({"id": ..., "op": "relu", "language": "cpp", "source": "..."})");
  for (const auto& [key, value] : item.items()) {
    if (key != "id" && key != "op" && key != "language" && key != "source") {
      throw error_at(where, "unknown field '" + key + "'", "id, op, language and source");
    }
  }
  RewardCandidate candidate;
  if (item.contains("id")) {
    if (item["id"].is_string()) {
      candidate.id = item["id"].get<std::string>();
    } else if (item["id"].is_number_integer()) {
      candidate.id = std::to_string(item["id"].get<int64_t>());
    } else {
      throw error_at(where, "bad id", "a string or an integer");
    }
  }
  if (!item.contains("op") || !item["op"].is_string() || item["op"].get<std::string>().empty()) {
    throw error_at(where, "no op", "the operator as a string: relu, add.Tensor, aten.mul.Tensor");
  }
  candidate.op = item["op"].get<std::string>();
  if (item.contains("language")) {
    const auto language = item["language"].is_string() ? kernel_language_named(item["language"].get<std::string>()) : std::nullopt;
    if (!language) throw error_at(where, "bad language", "cpp, cuda or python");
    candidate.language = *language;
  }
  if (!item.contains("source") || !item["source"].is_string()) {
    throw error_at(where, "no source", "the kernel file's whole text as a string");
  }
  candidate.source = item["source"].get<std::string>();
  return candidate;
}

nlohmann::json reward_json(const Reward& reward) {
  nlohmann::json json = {{"schema", "backendbench-reward"},
                         {"version", 1},
                         {"id", reward.id},
                         {"op", reward.op},
                         {"language", reward.language},
                         {"outcome", reward.outcome},
                         {"correct", reward.correct},
                         {"reason", reward.reason},
                         {"failed_case", reward.failed_case},
                         {"build_errors", reward.build_errors},
                         {"passed", reward.passed},
                         {"failed", reward.failed},
                         {"skipped", reward.skipped},
                         {"speedup", reward.speedup ? json_number(*reward.speedup) : nlohmann::json()},
                         {"speedup_low", reward.speedup ? number_or_null(reward.speedup_low) : nlohmann::json()},
                         {"speedup_high", reward.speedup ? number_or_null(reward.speedup_high) : nlohmann::json()},
                         {"timed_cases", reward.timed_cases},
                         {"flags", reward.flags},
                         {"seconds", {{"build", reward.build_seconds}, {"check", reward.check_seconds},
                                      {"time", reward.time_seconds}, {"total", reward.seconds}}}};
  return json;
}

RewardService::RewardService(RewardOptions options) : options_(std::move(options)) {
  if (options_.concurrency < 1) throw error_at("--concurrency", "less than 1", "at least one candidate at a time");
  files::make_directories(options_.work_directory + "/attempts");
  for (const std::string& suite : options_.suites) {
    for (const planner::SuiteManifest::Operator& op : planner::read_suite_manifest(options_.tree.suite_manifest_path(suite)).operators) {
      SuiteCases cases{suite, {}};
      for (size_t i = 0; i < op.cases.size(); i += options_.feedback_cases ? 2 : 1) cases.cases.push_back(op.cases[i].name);
      if (!cases.cases.empty()) cases_[op.op].push_back(std::move(cases));
    }
  }
  for (int slot = options_.concurrency - 1; slot >= 0; --slot) free_slots_.push_back(slot);
}

RewardService::~RewardService() = default;

CandidateBench& RewardService::bench_for(KernelLanguage language) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<CandidateBench>& bench = benches_[language];
  if (!bench) {
    CandidateBenchOptions bench_options{options_.tree, options_.concurrency, language, options_.device,
                                        options_.case_timeout_seconds, options_.templates_directory, options_.salt,
                                        options_.timed_suites, options_.sandbox, options_.work_directory + "/attempts",
                                        options_.suites};
    auto made = std::make_unique<CandidateBench>(bench_options);
    made->prepare(options_.work_directory + "/slots_" + kernel_language_name(language) + ".log");
    bench = std::move(made);
  }
  return *bench;
}

int RewardService::take_slot() {
  std::unique_lock<std::mutex> lock(mutex_);
  slot_free_.wait(lock, [&] { return !free_slots_.empty(); });
  const int slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

void RewardService::give_slot(int slot) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_slots_.push_back(slot);
  }
  slot_free_.notify_one();
}

Reward RewardService::score(const RewardCandidate& candidate) {
  const auto start = Clock::now();
  Reward reward;
  reward.id = candidate.id;
  reward.language = kernel_language_name(candidate.language);
  reward.outcome = "error";
  if (!candidate.invalid.empty()) {
    reward.op = candidate.op;
    reward.reason = candidate.invalid;
    return reward;
  }
  const auto op = naming::OperatorName::from_user(candidate.op);
  const auto cases = op ? cases_.find(op->display()) : cases_.end();
  reward.op = op ? op->display() : candidate.op;
  if (cases == cases_.end()) {
    std::string suites;
    for (const std::string& suite : options_.suites) suites += (suites.empty() ? "" : ", ") + suite;
    reward.reason = "'" + candidate.op + "' is not an operator of the suites " + suites +
                    "; expected one they have (backendbench ops --suite <suite> lists them)";
    reward.seconds = seconds_since(start);
    return reward;
  }
  std::string attempt;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    attempt = options_.work_directory + "/attempts/" + std::to_string(++next_attempt_);
  }
  files::remove_tree(attempt);
  files::make_directories(attempt);
  const int slot = take_slot();
  try {
    // The kernel contract's folder, so the function is the one a kernel folder would have: the
    // base name where it means this overload (relu → relu_kernel_impl, add → add.Tensor's),
    // else the overload's folder (add.Scalar → add__Scalar_kernel_impl).
    const auto base_means = naming::OperatorName::from_folder(op->base);
    const std::string folder = base_means && *base_means == *op ? op->base : op->folder();
    const CandidateResult result = bench_for(candidate.language).check(slot, attempt, folder, 1, candidate.source, cases->second,
                                                                      candidate.beside);
    reward.build_seconds = result.build_seconds;
    reward.check_seconds = result.check_seconds;
    reward.time_seconds = result.time_seconds;
    reward.passed = result.passed;
    reward.failed = result.failed;
    reward.skipped = result.skipped;
    if (result.stage == CandidateResult::Stage::kBuildFailed) {
      reward.outcome = "build_failed";
      reward.build_errors = result.build_errors;
      reward.reason = result.build_errors.empty() ? "the build failed without a message" : result.build_errors.front();
    } else {
      reward.correct = result.correct();
      reward.outcome = reward.correct ? "passed" : "failed";
      for (const Verdict& verdict : result.verdicts) {
        if (verdict.status != Verdict::Status::kFailed) continue;
        reward.reason = first_failure_reason(verdict);
        reward.failed_case = verdict.suite + "/" + verdict.case_name;
        break;
      }
      if (!reward.correct && reward.reason.empty()) reward.reason = "no case ran (every case skipped)";
      // The timed cases (candidate_bench.h: a correct candidate's ./bench verdicts), scored as
      // BackendBench scores them: a failed performance test counts as 1.0.
      std::vector<double> speedups;
      const VerdictFile timed = read_verdicts(attempt + "/bench.verdicts.jsonl");
      for (const Verdict& verdict : timed.verdicts) {
        if (verdict.status == Verdict::Status::kSkipped) continue;
        speedups.push_back(counted_speedup(verdict));
        for (const std::string& flag : verdict.flags) ++reward.flags[flag];
      }
      // Not timed (no file), or a line no case can be given (its supervisor did not finish it):
      // no speedup, rather than one over the cases that happened to be readable.
      if (!timed.unreadable.empty()) speedups.clear();
      if (!speedups.empty()) {
        const SpeedupSpread spread = speedup_spread(speedups);
        reward.speedup = spread.geomean;
        reward.speedup_low = spread.low;
        reward.speedup_high = spread.high;
        reward.timed_cases = static_cast<int>(speedups.size());
      }
    }
  } catch (const std::exception& error) {
    reward.outcome = "error";
    reward.reason = error.what();
  }
  give_slot(slot);
  if (!options_.keep_attempts) files::remove_tree(attempt);
  reward.seconds = seconds_since(start);
  return reward;
}

std::vector<Reward> RewardService::score_batch(const std::vector<RewardCandidate>& candidates) {
  std::vector<Reward> rewards(candidates.size());
  size_t next = 0;
  std::mutex next_mutex;
  std::vector<std::thread> workers;
  for (int worker = 0; worker < options_.concurrency; ++worker) {
    workers.emplace_back([&] {
      for (;;) {
        size_t index;
        {
          std::lock_guard<std::mutex> lock(next_mutex);
          if (next >= candidates.size()) return;
          index = next++;
        }
        rewards[index] = score(candidates[index]);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return rewards;
}

void RewardService::stream(const std::function<std::optional<RewardCandidate>()>& next, const std::function<void(const Reward&)>& done) {
  std::mutex in, out;
  std::vector<std::thread> workers;
  for (int worker = 0; worker < options_.concurrency; ++worker) {
    workers.emplace_back([&] {
      for (;;) {
        std::optional<RewardCandidate> candidate;
        {
          std::lock_guard<std::mutex> lock(in);
          candidate = next();
        }
        if (!candidate) return;
        const Reward reward = score(*candidate);
        std::lock_guard<std::mutex> lock(out);
        done(reward);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
}

}  // namespace backendbench::agents
