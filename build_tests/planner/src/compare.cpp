// Comparing two runs; see compare.h.
#include "planner/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "planner/run_scores.h"
#include "planner/report.h"

namespace backendbench::planner {
namespace {

using CaseKey = std::tuple<std::string, std::string, std::string, std::string, bool>;

CaseKey key_of(const Verdict& verdict) {
  return {verdict.suite, verdict.op, verdict.backend, verdict.case_name, is_performance_test(verdict)};
}

std::map<CaseKey, const Verdict*> by_case(const std::vector<Verdict>& verdicts) {
  std::map<CaseKey, const Verdict*> cases;
  for (const Verdict& verdict : verdicts) {
    if (verdict.status != Verdict::Status::kSkipped) cases[key_of(verdict)] = &verdict;
  }
  return cases;
}

std::string first_error(const Verdict& verdict) { return verdict.errors.empty() ? "failed" : verdict.errors.front(); }

std::string figure(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// A geomean speedup, or "-" without performance tests.
std::string speed(double value) { return std::isnan(value) ? std::string("-") : figure("%.3fx", value); }

// A row's change of speedup ("+12.0%"), or why there is none ("only A", "only B", "-").
std::string change_text(const RowChange& row) {
  if (std::isnan(row.speedup_before) || std::isnan(row.speedup_after)) {
    return row.only_before ? "only A" : row.only_after ? "only B" : "-";
  }
  return figure("%+.1f%%", 100 * (row.speedup_after / row.speedup_before - 1));
}

CaseChange change_of(const Verdict& verdict, std::string what) {
  return {verdict.suite, verdict.op, verdict.backend, verdict.case_name,
          is_performance_test(verdict) ? "performance" : "correctness", std::move(what)};
}

}  // namespace

Comparison compare_runs(const std::vector<Verdict>& before, const std::vector<Verdict>& after, double threshold) {
  Comparison comparison;
  const auto old_cases = by_case(before), new_cases = by_case(after);
  for (const auto& [key, old_verdict] : old_cases) {
    const auto found = new_cases.find(key);
    if (found == new_cases.end()) {
      ++comparison.only_before;
      continue;
    }
    ++comparison.matched;
    const Verdict& new_verdict = *found->second;
    if (old_verdict->passed() && !new_verdict.passed()) {
      comparison.regressions.push_back(change_of(new_verdict, "passed → failed: " + first_error(new_verdict)));
    } else if (!old_verdict->passed() && new_verdict.passed()) {
      comparison.improvements.push_back(change_of(new_verdict, "failed → passed (was: " + first_error(*old_verdict) + ")"));
    } else if (old_verdict->passed() && old_verdict->timing && new_verdict.timing && old_verdict->timing->speedup > 0 &&
               new_verdict.timing->speedup > 0) {
      const double ratio = new_verdict.timing->speedup / old_verdict->timing->speedup;
      const std::string what = "speedup " + figure("%.3fx", old_verdict->timing->speedup) + " → " +
                               figure("%.3fx", new_verdict.timing->speedup) + " (" + figure("%+.1f%%", 100 * (ratio - 1)) + ")";
      if (ratio < 1 - threshold) comparison.regressions.push_back(change_of(new_verdict, what));
      if (ratio > 1 + threshold) comparison.improvements.push_back(change_of(new_verdict, what));
    }
  }
  for (const auto& [key, verdict] : new_cases) comparison.only_after += old_cases.count(key) == 0;

  std::map<std::pair<std::string, std::string>, RowChange> rows;
  for (const OperatorResult& row : operator_results(before)) {
    RowChange& change = rows[{row.op, row.backend}];
    change = {row.op, row.backend, row.geomean_speedup(), NAN,
              row.correctness_tests - row.passed_correctness + row.performance_tests - row.passed_performance, 0, true,
              false};
  }
  for (const OperatorResult& row : operator_results(after)) {
    auto [entry, added] = rows.try_emplace({row.op, row.backend});
    RowChange& change = entry->second;
    if (added) change = {row.op, row.backend, NAN, NAN, 0, 0, false, true};
    change.only_before = false;
    change.speedup_after = row.geomean_speedup();
    change.failed_after = row.correctness_tests - row.passed_correctness + row.performance_tests - row.passed_performance;
  }
  for (auto& [key, change] : rows) comparison.rows.push_back(change);
  return comparison;
}

std::string comparison_text(const Comparison& comparison, const std::string& before_label,
                            const std::string& after_label, double threshold) {
  std::string text = "comparing " + before_label + " (A) with " + after_label + " (B): " +
                     std::to_string(comparison.matched) + " tests in both, " + std::to_string(comparison.only_before) +
                     " only in A, " + std::to_string(comparison.only_after) + " only in B; a speedup change counts beyond " +
                     figure("%.0f%%", 100 * threshold) + "\n\n";
  char line[512];
  std::snprintf(line, sizeof(line), "  %-32s %-10s %8s %8s %9s %9s %8s\n", "operator", "backend", "failed A", "failed B",
                "speedup A", "speedup B", "change");
  text += "per operator and backend (geomean speedup; failed tests)\n" + std::string(line);
  for (const RowChange& row : comparison.rows) {
    const std::string change = change_text(row);
    std::snprintf(line, sizeof(line), "  %-32s %-10s %8d %8d %9s %9s %8s\n", row.op.c_str(), row.backend.c_str(),
                  row.failed_before, row.failed_after, speed(row.speedup_before).c_str(),
                  speed(row.speedup_after).c_str(), change.c_str());
    text += line;
  }
  for (const auto* list : {&comparison.regressions, &comparison.improvements}) {
    const bool regressions = list == &comparison.regressions;
    text += "\n" + std::to_string(list->size()) + (regressions ? " regressions" : " improvements") + "\n";
    for (const CaseChange& change : *list) {
      text += "  " + change.suite + "/" + change.op + "/" + change.case_name + "/" + change.backend + " (" +
              change.test_type + "): " + change.what + "\n";
    }
  }
  return text;
}

namespace {

// How much worse a row got: more failures first, then the larger loss of speedup.
std::pair<int, double> worsening(const RowChange& row) {
  const double ratio = std::isnan(row.speedup_before) || std::isnan(row.speedup_after) ? 1.0 : row.speedup_after / row.speedup_before;
  return {row.failed_after - row.failed_before, -ratio};
}

}  // namespace

std::string comparison_html(const Comparison& comparison, const std::string& before_label,
                            const std::string& after_label, double threshold) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>backendbench compare: " +
      html_text(before_label) + " (A) and " + html_text(after_label) +
      " (B)</title>\n<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}"
      "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
      "th{background:#f4f4f4}td.n{text-align:right}.worse{background:#fde2e1}.better{background:#e1f5e4}"
      "code{font-size:90%}</style></head><body>\n";
  html += "<h1>B against A</h1>\n<p>A: <code>" + html_text(before_label) + "</code><br>B: <code>" + html_text(after_label) +
          "</code></p>\n<p id=\"summary\">" + std::to_string(comparison.regressions.size()) + " regressions, " +
          std::to_string(comparison.improvements.size()) + " improvements; " + std::to_string(comparison.matched) +
          " tests in both, " + std::to_string(comparison.only_before) + " only in A, " +
          std::to_string(comparison.only_after) + " only in B; a speedup change counts beyond " +
          figure("%.0f%%", 100 * threshold) + ".</p>\n";
  for (const auto* list : {&comparison.regressions, &comparison.improvements}) {
    const bool regressions = list == &comparison.regressions;
    html += std::string("<h2 id=\"") + (regressions ? "regressions" : "improvements") + "\">" +
            std::to_string(list->size()) + (regressions ? " regressions" : " improvements") + "</h2>\n";
    if (list->empty()) continue;
    html += "<table><tr><th>suite</th><th>operator</th><th>case</th><th>backend</th><th>test</th><th>what changed</th></tr>\n";
    for (const CaseChange& change : *list) {
      html += std::string("<tr class=\"") + (regressions ? "worse" : "better") + "\"><td>" + html_text(change.suite) +
              "</td><td>" + html_text(change.op) + "</td><td>" + html_text(change.case_name) + "</td><td>" +
              html_text(change.backend) + "</td><td>" + html_text(change.test_type) + "</td><td>" + html_text(change.what) +
              "</td></tr>\n";
    }
    html += "</table>\n";
  }
  std::vector<RowChange> rows = comparison.rows;
  std::stable_sort(rows.begin(), rows.end(), [](const RowChange& a, const RowChange& b) { return worsening(a) > worsening(b); });
  html += "<h2 id=\"rows\">Per operator and backend</h2>\n<p>Geomean speedup over aten and failed tests; rows that got "
          "worse first.</p>\n<table><tr><th>operator</th><th>backend</th><th>failed A</th><th>failed B</th>"
          "<th>speedup A</th><th>speedup B</th><th>change</th></tr>\n";
  for (const RowChange& row : rows) {
    const std::pair<int, double> worse = worsening(row);
    const bool slower = worse.second > -(1 - threshold), faster = worse.second < -(1 + threshold);
    const std::string change = change_text(row);
    const std::string css = worse.first > 0 || (worse.first == 0 && slower) ? " class=\"worse\""
                            : worse.first < 0 || faster                      ? " class=\"better\""
                                                                             : "";
    html += "<tr" + css + "><td>" + html_text(row.op) + "</td><td>" + html_text(row.backend) + "</td><td class=\"n\">" +
            std::to_string(row.failed_before) + "</td><td class=\"n\">" + std::to_string(row.failed_after) +
            "</td><td class=\"n\">" + speed(row.speedup_before) + "</td><td class=\"n\">" + speed(row.speedup_after) +
            "</td><td class=\"n\">" + change + "</td></tr>\n";
  }
  html += "</table>\n</body></html>\n";
  return html;
}

}  // namespace backendbench::planner
