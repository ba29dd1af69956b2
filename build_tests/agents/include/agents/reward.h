// The reward API of training loops: a kernel's source text in (an operator, a language), a
// verdict object out (correct or not, the first failed check and why, the compiler's first error,
// the speedup over ATen with its interval, the timing's flags), one at a time, in a batch or as a
// stream. Every candidate is built alone in a sandboxed slot and checked by served test
// executables (candidate_bench.h, the llm backends' path), so many calls share one build folder,
// its precompiled header and one pool of kernel workers; nothing is configured or rebuilt but the
// candidate. The same rules as the llm backends: the sandbox, and which cases with which salt:
// `holdout` scores every case of the operator in the suites with the service's salt (the llm
// backends' final score); `feedback` every second case with a salt derived from it (what their
// loop shows the model), a cheaper signal for shaping.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/candidate_bench.h"
#include "agents/kernel_prompt.h"
#include "planner/build_tree.h"

namespace backendbench::agents {

struct RewardCandidate {
  std::string id;        // the caller's, returned as it is ("": its place in the stream)
  std::string op;        // relu, add.Tensor, aten.mul.Tensor
  KernelLanguage language = KernelLanguage::kCpp;
  std::string source;    // the whole kernel file
  // Files written beside it (a path relative to the candidate's kernel folder, such as
  // elementwise.h or relu/helpers.h → its text): the headers a kernel of a folder includes. Not
  // part of the JSON form.
  std::map<std::string, std::string> beside;
  // Set for a request that could not be read: it is answered with this error (outcome "error"),
  // so that a stream's answers match its requests one for one.
  std::string invalid;
};

// One line of a stream or an item of a batch as JSON: {"id", "op", "language" (cpp, cuda,
// python; default cpp), "source"}. Throws DiagnosticError located at `where` (file:line) naming
// the field that is wrong and the expected form.
RewardCandidate reward_candidate_from_json(const std::string& text, const std::string& where);

struct Reward {
  std::string id, op, language;
  // passed: correct on every case; failed: some case failed; build_failed: it did not compile;
  // error: the request could not be scored (an operator the suites lack, an unusable language).
  std::string outcome;
  bool correct = false;
  std::string reason;                     // failed: the first failed case's reason; build_failed: the compiler's first error; error: why
  std::string failed_case;                // failed: that case (suite/case)
  std::vector<std::string> build_errors;  // build_failed: the compiler's first lines, paths relative to the kernel folder
  int passed = 0, failed = 0, skipped = 0;
  // Timed (a correct candidate, timed suites): the geometric mean speedup over ATen of its timed
  // cases, its 95 % interval (NaN with fewer than 2 cases) and the timing's flags (suspect,
  // overhead_dominated, ...) with how many cases raised each.
  std::optional<double> speedup;
  double speedup_low = 0, speedup_high = 0;
  int timed_cases = 0;
  std::map<std::string, int> flags;
  double build_seconds = 0, check_seconds = 0, time_seconds = 0, seconds = 0;
};
nlohmann::json reward_json(const Reward& reward);

struct RewardOptions {
  planner::BuildTree tree;
  std::vector<std::string> suites;
  std::set<std::string> timed_suites;  // correct candidates are timed on these suites' cases
  std::string device;                  // "" as the executables decide
  uint64_t salt = 0;                   // holdout's salt; feedback's is derived from it by the caller
  bool feedback_cases = false;         // every second case (feedback) instead of every case (holdout)
  int concurrency = 2;                 // candidates built and checked at once
  int case_timeout_seconds = 60;
  bool sandbox = true;
  bool keep_attempts = false;          // keep each candidate's folder (kernel, build log, verdicts)
  std::string work_directory;          // absolute: attempts/ and the served executables' logs
  std::string templates_directory;
};

class RewardService {
 public:
  explicit RewardService(RewardOptions options);
  ~RewardService();

  // One candidate; thread-safe, at most `concurrency` at once (others wait for a slot).
  Reward score(const RewardCandidate& candidate);
  // A batch, `concurrency` at once; the rewards in the batch's order.
  std::vector<Reward> score_batch(const std::vector<RewardCandidate>& candidates);
  // A stream: candidates from `next` (nullopt: the end) scored `concurrency` at once, each reward
  // given to `done` as it is ready (in the order they finish, from one thread at a time).
  void stream(const std::function<std::optional<RewardCandidate>()>& next, const std::function<void(const Reward&)>& done);

  const RewardOptions& options() const { return options_; }

 private:
  CandidateBench& bench_for(KernelLanguage language);
  int take_slot();
  void give_slot(int slot);

  RewardOptions options_;
  std::map<std::string, std::vector<SuiteCases>> cases_;  // operator (display name) → its cases per suite
  std::mutex mutex_;
  std::map<KernelLanguage, std::unique_ptr<CandidateBench>> benches_;
  std::vector<int> free_slots_;
  std::condition_variable slot_free_;
  uint64_t next_attempt_ = 0;
};

}  // namespace backendbench::agents
