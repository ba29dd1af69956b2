// The HTML report; see report.h.
#include "planner/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "backendbench/json_numbers.h"
#include "language/json_text.h"
#include "planner/run_scores.h"
#include "planner/findings.h"
#include "emit/template.h"

namespace backendbench::planner {
namespace {

// Text that can sit inside <script>: no "</" (JSON allows "\/" for "/").
std::string script_safe(std::string text) {
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3)) text.replace(at, 2, "<\\/");
  return text;
}

std::string joined(const nlohmann::json& list) {
  std::string text;
  if (!list.is_array()) return text;
  for (const nlohmann::json& item : list) text += (text.empty() ? "" : ", ") + (item.is_string() ? item.get<std::string>() : json_text::dump(item));
  return text;
}

std::string duration_text(double seconds) {
  char text[32];
  if (seconds < 120) std::snprintf(text, sizeof(text), "%.1f s", seconds);
  else std::snprintf(text, sizeof(text), "%d min %02d s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  return text;
}

// The run's facts as [what, value] rows, paths shown relative to where the run started.
nlohmann::json run_facts(const nlohmann::json& run) {
  nlohmann::json facts = nlohmann::json::array();
  auto add = [&](const std::string& what, const std::string& value) {
    if (!value.empty()) facts.push_back({what, value});
  };
  const nlohmann::json versions = run.value("versions", nlohmann::json::object());
  auto version = [&](const char* key) { return versions.value(key, std::string()); };
  add("command", run.value("command", std::string()));
  add("started in", run.value("working_directory", std::string()));
  add("started", run.value("started", std::string()));
  if (run.contains("seconds") && run["seconds"].is_number()) add("took", duration_text(run["seconds"].get<double>()));
  add("device", run.value("device", std::string()) + (version("gpu").empty() ? "" : " (" + version("gpu") + ")"));
  add("suites", joined(run.value("suites", nlohmann::json::array())));
  add("timed suites", joined(run.value("timed_suites", nlohmann::json::array())));
  add("backends", joined(run.value("backends", nlohmann::json::array())));
  add("operators", joined(run.value("ops", nlohmann::json::array())));
  add("kernel folder", shown_path(run.value("kernels_directory", std::string()), run));
  add("build folder", shown_path(run.value("build_directory", std::string()), run));
  add("salt (BACKENDBENCH_SALT repeats the inputs)", run.value("salt", std::string()));
  if (run.contains("sandboxed")) add("kernels sandboxed", run.value("sandboxed", true) ? "yes (bubblewrap)" : "NO (--no-sandbox)");
  add("torch", version("torch"));
  add("C++ compiler", version("cxx_compiler"));
  add("CUDA compiler", version("cuda_compiler"));
  add("backendbench commit", version("backendbench_commit"));
  add("operating system", version("os"));
  return facts;
}

// What ran, where: "smoke, edge · aten, directory · cpu".
std::string run_title(const nlohmann::json& run) {
  const nlohmann::json versions = run.value("versions", nlohmann::json::object());
  const std::string gpu = versions.value("gpu", std::string());
  nlohmann::json backends = nlohmann::json::array();
  const std::string here = run.value("working_directory", std::string());
  for (const nlohmann::json& backend : run.value("backends", nlohmann::json::array())) {
    std::string text = backend.is_string() ? shown_path(backend.get<std::string>(), run) : json_text::dump(backend);
    // "directory (/where/it/started/generated_kernels)": the folder inside the label too
    for (size_t at; !here.empty() && (at = text.find(" (" + here + "/")) != std::string::npos;) text.erase(at + 2, here.size() + 1);
    backends.push_back(text);
  }
  return joined(run.value("suites", nlohmann::json::array())) + " · " + joined(backends) +
         " · " + (gpu.empty() ? run.value("device", std::string("cpu")) : gpu);
}

void tag_all(nlohmann::json& items, const char* key, const std::string& tag) {
  for (nlohmann::json& item : items) item[key] = tag + ": " + item.value(key, std::string());
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
  data["findings"] = findings_json(run_findings(verdicts, run));
  data["runs"] = nlohmann::json::array({{{"tag", ""}, {"facts", run_facts(run)}}});
  data["title"] = run_title(run);
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
                            {"max_rel_error", number_or_null(row.max_rel_error)},
                            {"aten_share", number_or_null(row.aten_share)}});
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
                             {"arguments", verdict.arguments},
                             {"speedup", timed && verdict.passed() ? json_number(verdict.timing->speedup) : nlohmann::json()},
                             {"kernel_us", timed ? json_number(verdict.timing->kernel_us) : nlohmann::json()},
                             {"reference_us", timed ? json_number(verdict.timing->reference_us) : nlohmann::json()},
                             {"max_abs_error", json_number(verdict.max_abs_error)},
                             {"max_rel_error", json_number(verdict.max_rel_error)},
                             {"bytes", json_number(timed ? verdict.timing->bytes : 0.0)},
                             {"flops", json_number(timed ? verdict.timing->flops : 0.0)},
                             {"pct_peak_bw", json_number(timed ? verdict.timing->pct_peak_bw : 0.0)},
                             {"pct_peak_flops", json_number(timed ? verdict.timing->pct_peak_flops : 0.0)}});
    if (verdict.status != Verdict::Status::kFailed) continue;
    data["failures"].push_back({{"suite", verdict.suite},
                                {"op", verdict.op},
                                {"backend", verdict.backend},
                                {"case", verdict.case_name},
                                {"test_type", test_type},
                                {"error_type", failure_kind(verdict)},
                                {"errors", verdict.errors},
                                {"arguments", verdict.arguments},
                                {"source", shown_path(verdict.trace_file, run) + ":" + std::to_string(verdict.trace_line)},
                                {"kernel_file", shown_path(verdict.kernel_file, run)},
                                {"reproduce", reproduce_command(verdict, run)}});
  }
  return data;
}

std::vector<std::string> run_tags(const std::vector<std::string>& folders, const std::vector<nlohmann::json>& runs) {
  std::vector<std::string> tags;
  for (const nlohmann::json& run : runs) {
    const std::string gpu = run.value("versions", nlohmann::json::object()).value("gpu", std::string());
    tags.push_back(gpu.empty() ? "CPU" : gpu);
  }
  bool differ = true;
  for (size_t i = 0; i < tags.size(); ++i) {
    for (size_t j = 0; j < i; ++j) differ = differ && tags[i] != tags[j];
  }
  if (!differ) {
    for (size_t i = 0; i < folders.size(); ++i) {
      std::string name = folders[i];
      while (name.size() > 1 && name.back() == '/') name.pop_back();
      tags[i] = name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
    }
  }
  for (size_t i = 0; i < tags.size(); ++i) {  // two folders of the same name: number them
    for (size_t j = 0; j < i; ++j) {
      if (tags[i] == tags[j]) tags[i] += " (" + std::to_string(i + 1) + ")";
    }
  }
  return tags;
}

nlohmann::json combined_report_data(const std::vector<ResultsRun>& runs) {
  if (runs.size() == 1) return report_data(runs[0].verdicts, runs[0].run);
  nlohmann::json data = {{"run", runs.empty() ? nlohmann::json::object() : runs[0].run},
                         {"p", runs.empty() ? 1.0 : runs[0].run.value("p", 1.0)}};
  for (const char* list : {"groups", "rows", "failures", "cases", "runs"}) data[list] = nlohmann::json::array();
  data["findings"] = {{"kernels", nlohmann::json::array()}, {"skipped", nlohmann::json::array()}};
  data["run"].erase("generation");  // one run's model-written kernels: that run's own report shows them
  std::string tags;
  for (const ResultsRun& one : runs) {
    nlohmann::json part = report_data(one.verdicts, one.run);
    tag_all(part["groups"], "label", one.tag);
    for (const char* list : {"rows", "failures", "cases"}) tag_all(part[list], "backend", one.tag);
    tag_all(part["findings"]["kernels"], "backend", one.tag);
    tag_all(part["findings"]["skipped"], "backend", one.tag);
    for (const char* list : {"groups", "rows", "failures", "cases"}) {
      for (nlohmann::json& item : part[list]) data[list].push_back(std::move(item));
    }
    for (const char* list : {"kernels", "skipped"}) {
      for (nlohmann::json& item : part["findings"][list]) data["findings"][list].push_back(std::move(item));
    }
    data["runs"].push_back({{"tag", one.tag}, {"facts", part["runs"][0]["facts"]}});
    tags += (tags.empty() ? "" : ", ") + one.tag;
  }
  // Across runs too: the wrong kernels first, then the slow ones (run_findings' order within each).
  auto rank = [](const nlohmann::json& kernel) {
    return kernel.value("wrong", false) ? 0 : kernel.value("slow", false) ? 1 : 2;
  };
  std::stable_sort(data["findings"]["kernels"].begin(), data["findings"]["kernels"].end(),
                   [&](const nlohmann::json& a, const nlohmann::json& b) { return rank(a) < rank(b); });
  data["title"] = std::to_string(runs.size()) + " runs: " + tags;
  return data;
}

std::string report_html(const nlohmann::json& data, const std::string& templates_directory, const std::string& plotly_js) {
  const emit::CodeTemplate page = emit::CodeTemplate::load(templates_directory + "/report.html.in");
  const std::string missing_plotly =
      "window.Plotly = {newPlot: function (id) { document.getElementById(id).textContent = "
      "'plotly.js was not found when this command was built (pip install plotly, then rebuild)'; "
      "return Promise.resolve(); }};";
  return page.render({{"generated", "@generated by backendbench from templates/report.html.in; data: verdicts.jsonl, run.json"},
                      {"title", html_text("backendbench: " + data.value("title", std::string("report")))},
                      {"plotly_js", plotly_js.empty() ? missing_plotly : script_safe(plotly_js)},
                      {"report_json", script_safe(json_text::dump(data))}});
}

}  // namespace backendbench::planner
