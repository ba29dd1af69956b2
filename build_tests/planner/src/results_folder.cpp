// BackendBench's result files from verdicts; see results_folder.h for what differs and why.
#include "planner/results_folder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <tuple>

#include "backendbench/files.h"
#include "language/json_text.h"
#include "planner/run_scores.h"
#include "language/csv.h"

namespace backendbench {
namespace {

std::string first_error(const Verdict& verdict) { return verdict.errors.empty() ? "" : verdict.errors.front(); }

nlohmann::json number_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

nlohmann::json record_of(const Verdict& verdict) {
  nlohmann::json record = {{"op_name", verdict.op}, {"args", verdict.arguments}};
  if (is_performance_test(verdict)) {
    const bool timed = verdict.timing.has_value();
    record["speedup"] = timed ? number_or_null(verdict.timing->speedup) : nlohmann::json(0.0);
    record["benchmark_time_ms"] = timed ? number_or_null(verdict.timing->kernel_us / 1e3) : nlohmann::json();
    record["reference_time_ms"] = timed ? number_or_null(verdict.timing->reference_us / 1e3) : nlohmann::json();
    record["error_msg"] = first_error(verdict);
    record["successfully_ran"] = verdict.passed();
    record["test_type"] = "performance";
  } else {
    record["is_correct"] = verdict.passed();
    record["error_msg"] = first_error(verdict);
    record["error_type"] = failure_kind(verdict);
    record["traceback"] = "";
    record["max_abs_error"] = number_or_null(verdict.max_abs_error);
    record["max_rel_error"] = number_or_null(verdict.max_rel_error);
    record["test_type"] = "correctness";
  }
  record["backend"] = verdict.backend;
  record["suite"] = verdict.suite;
  record["case"] = verdict.case_name;
  return record;
}

// The verdicts that count (skipped ones do not), ordered as the original orders its records:
// by operator, then arguments; then backend and test type, so that the order is total.
std::vector<const Verdict*> ordered(const std::vector<Verdict>& verdicts) {
  std::vector<const Verdict*> kept;
  for (const Verdict& verdict : verdicts) {
    if (verdict.status != Verdict::Status::kSkipped) kept.push_back(&verdict);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Verdict* a, const Verdict* b) {
    return std::make_tuple(a->op, a->arguments, a->backend, is_performance_test(*a)) <
           std::make_tuple(b->op, b->arguments, b->backend, is_performance_test(*b));
  });
  return kept;
}

// Shortest text that reads back as the same double; "" for a value that is not a finite number.
std::string number_text(double value) {
  if (!std::isfinite(value)) return "";
  char text[64];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

std::string operator_summary_csv(const std::vector<OperatorResult>& rows) {
  std::string text =
      "operator,total_tests,correctness_tests,performance_tests,passed_correctness_tests,passed_performance_tests,"
      "failed_correctness_tests,failed_performance_tests,correctness_rate,avg_speedup,geomean_speedup,"
      "max_absolute_error,max_relative_error,backend\n";
  for (const OperatorResult& row : rows) {
    const std::vector<std::string> fields = {
        csv::field(row.op), std::to_string(row.correctness_tests + row.performance_tests),
        std::to_string(row.correctness_tests), std::to_string(row.performance_tests),
        std::to_string(row.passed_correctness), std::to_string(row.passed_performance),
        std::to_string(row.correctness_tests - row.passed_correctness),
        std::to_string(row.performance_tests - row.passed_performance),
        number_text(row.correctness_ratio()), number_text(row.mean_speedup()), number_text(row.geomean_speedup()),
        number_text(row.max_abs_error), number_text(row.max_rel_error), csv::field(row.backend)};
    for (size_t i = 0; i < fields.size(); ++i) text += (i ? "," : "") + fields[i];
    text += "\n";
  }
  return text;
}

std::string formatted(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string overall_summary_md(const std::vector<OperatorResult>& rows, const std::string& command, double p,
                               const BackendNames& names) {
  // One column per backend, each scored on its own; a run of one backend has the original's
  // single "Value" column.
  std::vector<BackendScore> backends = backend_scores(rows, names, p);
  if (backends.empty()) backends.push_back({"Value", run_score(rows, p)});
  auto score = [](double value) { return std::isnan(value) ? std::string("N/A") : formatted("%.2f", value); };
  auto line = [&](const std::string& metric, double RunScore::*field) {
    std::string text = "| " + metric + " |";
    for (const BackendScore& backend : backends) text += " " + score(backend.score.*field) + " |";
    return text + "\n";
  };
  std::string md = "# BackendBench Run Summary\n\n## Command\n\n```bash\n" + command + "\n```\n\n";
  md += "## Summary\n\n| Metric |";
  for (const BackendScore& backend : backends) md += " " + (backends.size() == 1 ? std::string("Value") : backend.label) + " |";
  md += "\n|--------|";
  for (size_t i = 0; i < backends.size(); ++i) md += "-------|";
  md += "\n" + line("Correctness Score", &RunScore::correctness) +
        line("Performance Score (geomean speedup)", &RunScore::performance) +
        line("Perf@" + number_text(p) + " Score", &RunScore::perf_at_p) + "\n";
  md += "### Metric Descriptions\n\n"
        "- **Correctness Score**: the fraction of operators (one row per operator and backend) that "
        "passed every correctness test.\n"
        "- **Performance Score**: the geometric mean over operators of each one's geometric-mean speedup "
        "over eager ATen; a failed performance test counts as 1.0.\n"
        "- **Perf@p Score**: the fraction of operators that are correct and whose speedup is above p.\n\n";
  md += "## Output Files\n\n"
        "- `full_results.json`: every test's record\n"
        "- `operator_summary.csv`: one row per operator and backend\n"
        "- `failed_tests.json`: the records of the tests that failed\n"
        "- `OVERALL_SUMMARY.md`: this summary\n\n";
  md += "## Operator Speedups vs Eager\n\n| Operator | Correctness Ratio | Speedup vs Eager |\n"
        "|----------|-------------------|------------------|\n";
  std::vector<const OperatorResult*> sorted;
  for (const OperatorResult& row : rows) sorted.push_back(&row);
  // By speedup, then correctness, as numbers (a row without a figure last), then by name.
  auto order = [](double value) { return std::isnan(value) ? -1.0 : value; };
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    return std::make_tuple(order(b->geomean_speedup()), order(b->correctness_ratio())) <
           std::make_tuple(order(a->geomean_speedup()), order(a->correctness_ratio()));
  });
  for (const OperatorResult* row : sorted) {
    const double ratio = row->correctness_ratio(), speedup = row->geomean_speedup();
    md += "| " + row->op + " (" + row->backend + ") | " +
          (std::isnan(ratio) ? std::string("N/A") : formatted("%.4f%%", 100 * ratio)) + " | " +
          (std::isnan(speedup) ? std::string("N/A") : formatted("%.4fx", speedup)) + " |\n";
  }
  return md;
}

}  // namespace

OriginalFiles original_files(const std::vector<Verdict>& verdicts, const std::string& command, double p,
                             const BackendNames& names) {
  const std::vector<const Verdict*> kept = ordered(verdicts);
  nlohmann::json all = nlohmann::json::array(), failed = nlohmann::json::array();
  for (const Verdict* verdict : kept) {
    all.push_back(record_of(*verdict));
    if (!verdict->passed()) failed.push_back(all.back());
  }
  const std::vector<OperatorResult> rows = operator_results(verdicts);
  return {json_text::dump(all, 2) + "\n", operator_summary_csv(rows), json_text::dump(failed, 2) + "\n", overall_summary_md(rows, command, p, names)};
}

void write_original_files(const std::string& directory, const OriginalFiles& files) {
  files::make_directories(directory);
  using backendbench::files::write_whole;
  write_whole(directory + "/full_results.json", files.full_results_json);
  write_whole(directory + "/operator_summary.csv", files.operator_summary_csv);
  write_whole(directory + "/failed_tests.json", files.failed_tests_json);
  write_whole(directory + "/OVERALL_SUMMARY.md", files.overall_summary_md);
}

}  // namespace backendbench
