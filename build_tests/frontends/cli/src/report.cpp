// The HTML report; see report.h.
#include "cli/report.h"

#include <cmath>

#include "backendbench/run_scores.h"
#include "emit/template.h"

namespace backendbench::cli {
namespace {

nlohmann::json number_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

// Text that can sit inside <script>: no "</" (JSON allows "\/" for "/").
std::string script_safe(std::string text) {
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3)) text.replace(at, 2, "<\\/");
  return text;
}

}  // namespace

std::string html_text(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    switch (c) {
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '&': escaped += "&amp;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&#39;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

BackendNames backend_names(const nlohmann::json& run) {
  return {run.value("kernels_label", "directory"), run.value("op_libraries", std::vector<std::string>{})};
}

nlohmann::json group_scores(const std::vector<Verdict>& verdicts, const nlohmann::json& run, double p) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [label, score] : backend_scores(operator_results(verdicts), backend_names(run), p)) {
    groups.push_back({{"label", label},
                      {"operators", score.operators},
                      {"correctness", number_or_null(score.correctness)},
                      {"performance", number_or_null(score.performance)},
                      {"perf_at_p", number_or_null(score.perf_at_p)}});
  }
  return groups;
}

nlohmann::json report_data(const std::vector<Verdict>& verdicts, const nlohmann::json& run) {
  const double p = run.value("p", 1.0);
  nlohmann::json data = {{"run", run}, {"p", p}, {"groups", group_scores(verdicts, run, p)}};
  data["rows"] = nlohmann::json::array();
  for (const OperatorResult& row : operator_results(verdicts)) {
    data["rows"].push_back({{"op", row.op},
                            {"backend", row.backend},
                            {"correct", row.correct()},
                            {"correctness_tests", row.correctness_tests},
                            {"failed_correctness", row.correctness_tests - row.passed_correctness},
                            {"performance_tests", row.performance_tests},
                            {"failed_performance", row.performance_tests - row.passed_performance},
                            {"geomean_speedup", number_or_null(row.geomean_speedup())},
                            {"max_abs_error", number_or_null(row.max_abs_error)},
                            {"max_rel_error", number_or_null(row.max_rel_error)}});
  }
  data["failures"] = nlohmann::json::array();
  data["cases"] = nlohmann::json::array();
  for (const Verdict& verdict : verdicts) {
    const std::string test_type = is_performance_test(verdict) ? "performance" : "correctness";
    const bool timed = verdict.timing.has_value();
    data["cases"].push_back({{"suite", verdict.suite},
                             {"op", verdict.op},
                             {"backend", verdict.backend},
                             {"case", verdict.case_name},
                             {"status", status_name(verdict.status)},
                             {"test_type", test_type},
                             {"speedup", timed && verdict.passed() ? number_or_null(verdict.timing->speedup) : nlohmann::json()},
                             {"kernel_us", timed ? number_or_null(verdict.timing->kernel_us) : nlohmann::json()},
                             {"reference_us", timed ? number_or_null(verdict.timing->reference_us) : nlohmann::json()},
                             {"bytes", timed ? verdict.timing->bytes : 0.0},
                             {"flops", timed ? verdict.timing->flops : 0.0},
                             {"pct_peak_bw", timed ? verdict.timing->pct_peak_bw : 0.0},
                             {"pct_peak_flops", timed ? verdict.timing->pct_peak_flops : 0.0}});
    if (verdict.status != Verdict::Status::kFailed) continue;
    data["failures"].push_back({{"suite", verdict.suite},
                                {"op", verdict.op},
                                {"backend", verdict.backend},
                                {"case", verdict.case_name},
                                {"test_type", test_type},
                                {"error_type", failure_kind(verdict)},
                                {"errors", verdict.errors},
                                {"arguments", verdict.arguments},
                                {"source", verdict.trace_file + ":" + std::to_string(verdict.trace_line)}});
  }
  return data;
}

std::string report_html(const nlohmann::json& data, const std::string& templates_directory, const std::string& plotly_js) {
  const emit::CodeTemplate page = emit::CodeTemplate::load(templates_directory + "/report.html.in");
  const std::string missing_plotly =
      "window.Plotly = {newPlot: function (id) { document.getElementById(id).textContent = "
      "'plotly.js was not found when this command was built (pip install plotly, then rebuild)'; "
      "return Promise.resolve(); }};";
  return page.render({{"generated", "@generated by backendbench from templates/report.html.in; data: verdicts.jsonl, run.json"},
                      {"title", html_text("backendbench: " + data["run"].value("command", std::string("run")))},
                      {"plotly_js", plotly_js.empty() ? missing_plotly : script_safe(plotly_js)},
                      {"report_json", script_safe(data.dump())}});
}

}  // namespace backendbench::cli
