// Per-row results and run scores; see run_scores.h for the definitions.
#include "planner/run_scores.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "backendbench/statistics.h"

namespace backendbench {

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::string first_failure_reason(const Verdict& verdict) {
  for (const CheckOutcome& check : verdict.checks) {
    if (!check.passed && !check.message.empty()) return check.check + ": " + first_line(check.message);
  }
  if (verdict.errors.empty()) return "failed without a message";
  // "<who> threw on <op> case <name> <arguments> (<file>:<line>) (draw i of n): <what>": what
  // went wrong first, the draw after it; the case and the kernel are beside the reason already.
  const std::string& error = verdict.errors.front();
  // The marker " (draw <i> of <n>): " on its first line, found by hand (not std::regex: <regex>
  // took a second of this room's build).
  const std::string line = first_line(error);
  size_t marker = std::string::npos, marker_end = 0;
  for (size_t at = line.find(" (draw "); at != std::string::npos; at = line.find(" (draw ", at + 1)) {
    size_t end = at + 7;
    const auto digits = [&] {
      const size_t start = end;
      while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
      return end > start;
    };
    if (digits() && line.compare(end, 4, " of ") == 0 && (end += 4, digits()) && line.compare(end, 3, "): ") == 0) {
      marker = at;
      marker_end = end + 3;
      break;
    }
  }
  if (marker == std::string::npos) return line;
  const std::string before = error.substr(0, marker);
  const std::string what = line.substr(marker_end);
  const std::string draw = line.substr(marker + 2, marker_end - 3 - (marker + 2));
  return (before.find(" threw on ") != std::string::npos ? "threw: " : "") + what + " (" + draw + ")";
}

SpeedupSpread speedup_spread(const std::vector<double>& speedups) {
  SpeedupSpread spread{NAN, NAN, NAN, NAN, NAN};
  if (speedups.empty()) return spread;
  double sum = 0;
  for (const double speedup : speedups) sum += std::log(speedup);
  const double mean = sum / static_cast<double>(speedups.size());
  spread.geomean = std::exp(mean);
  spread.lowest = *std::min_element(speedups.begin(), speedups.end());
  spread.highest = *std::max_element(speedups.begin(), speedups.end());
  if (speedups.size() < 2) return spread;
  double squares = 0;
  for (const double speedup : speedups) squares += (std::log(speedup) - mean) * (std::log(speedup) - mean);
  const int n = static_cast<int>(speedups.size());
  const double half = t_quantile_975(n - 1) * std::sqrt(squares / (n - 1)) / std::sqrt(static_cast<double>(n));
  spread.low = std::exp(mean - half);
  spread.high = std::exp(mean + half);
  return spread;
}

bool is_performance_test(const Verdict& verdict) { return verdict.frontend == "bench"; }

std::string failure_kind(const Verdict& verdict) {
  if (verdict.status != Verdict::Status::kFailed) return "";
  std::string kinds;
  auto add = [&](const std::string& kind) { kinds += (kinds.empty() ? "" : ",") + kind; };
  for (const CheckOutcome& check : verdict.checks) {
    if (!check.passed) add(check.check);
  }
  for (const char* flag : {"suspect", "hidden_work", "wrong_when_timed", "gpu_shared"}) {
    if (kinds.empty() && verdict.has_flag(flag)) add(flag);
  }
  return kinds.empty() ? "error" : kinds;
}

double counted_speedup(const Verdict& verdict) {
  if (!verdict.passed() || !verdict.timing || !(verdict.timing->speedup > 0)) return 1.0;
  // Too unsure to count a gain; a loss it keeps (a kernel cannot shed one by being erratic).
  if (verdict.has_flag("speedup_uncertain")) return std::min(1.0, verdict.timing->speedup);
  return verdict.timing->speedup;
}

OperatorResult::OperatorResult() : max_abs_error(NAN), max_rel_error(NAN), aten_share(NAN) {}

double OperatorResult::correctness_ratio() const {
  return correctness_tests ? static_cast<double>(passed_correctness) / correctness_tests : NAN;
}

double OperatorResult::geomean_speedup() const {
  if (speedups.empty()) return NAN;
  double sum = 0;
  for (double speedup : speedups) sum += std::log(speedup);
  return std::exp(sum / static_cast<double>(speedups.size()));
}

double OperatorResult::mean_speedup() const {
  if (speedups.empty()) return NAN;
  double sum = 0;
  for (double speedup : speedups) sum += speedup;
  return sum / static_cast<double>(speedups.size());
}

std::vector<OperatorResult> operator_results(const std::vector<Verdict>& verdicts) {
  std::map<std::pair<std::string, std::string>, OperatorResult> rows;
  auto larger = [](double current, double value) { return std::isnan(current) ? value : std::max(current, value); };
  for (const Verdict& verdict : verdicts) {
    if (verdict.status == Verdict::Status::kSkipped) continue;
    OperatorResult& row = rows[{verdict.op, verdict.backend}];
    row.op = verdict.op;
    row.backend = verdict.backend;
    if (verdict.aten_share >= 0) row.aten_share = larger(row.aten_share, verdict.aten_share);
    if (is_performance_test(verdict)) {
      ++row.performance_tests;
      row.passed_performance += verdict.passed();
      row.speedups.push_back(counted_speedup(verdict));
    } else {
      ++row.correctness_tests;
      row.passed_correctness += verdict.passed();
      row.max_abs_error = larger(row.max_abs_error, verdict.max_abs_error);
      row.max_rel_error = larger(row.max_rel_error, verdict.max_rel_error);
    }
  }
  std::vector<OperatorResult> sorted;
  for (auto& [key, row] : rows) sorted.push_back(std::move(row));
  return sorted;
}

RunScore run_score(const std::vector<OperatorResult>& rows, double p) {
  RunScore score;
  score.operators = static_cast<int>(rows.size());
  double correct = 0, log_sum = 0, fast = 0;
  int timed = 0;
  for (const OperatorResult& row : rows) {
    correct += row.correct();
    const double speedup = row.geomean_speedup();
    if (!std::isnan(speedup)) {
      log_sum += std::log(speedup);
      ++timed;
    }
    fast += row.correct() && speedup > p;
  }
  const double count = static_cast<double>(rows.size());
  score.correctness = rows.empty() ? NAN : correct / count;
  score.performance = timed ? std::exp(log_sum / timed) : NAN;
  score.perf_at_p = timed ? fast / count : NAN;
  return score;
}

std::vector<BackendScore> backend_scores(const std::vector<OperatorResult>& rows, const BackendNames& names, double p) {
  std::vector<std::pair<std::string, std::vector<OperatorResult>>> members = {{"aten", {}}, {names.kernels_label, {}}};
  for (const std::string& library : names.op_libraries) members.push_back({library, {}});
  for (const OperatorResult& row : rows) {
    size_t group = 1;  // a kernel of the folder
    if (row.backend == "aten") {
      group = 0;
    } else if (const auto library = std::find(names.op_libraries.begin(), names.op_libraries.end(), row.backend);
               library != names.op_libraries.end()) {
      group = 2 + static_cast<size_t>(library - names.op_libraries.begin());
    }
    members[group].second.push_back(row);
  }
  std::vector<BackendScore> scores;
  for (const auto& [label, members_rows] : members) {
    if (!members_rows.empty()) scores.push_back({label, run_score(members_rows, p)});
  }
  return scores;
}

}  // namespace backendbench
