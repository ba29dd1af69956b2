// The results folder's report.html: one self-contained page (plotly.js embedded, so it opens
// offline) with the run's scores, a sortable per-operator table, the failures with their messages
// and trace text, and plots: speedup per operator, speedup vs input size, share of the hardware's
// peak per case (roofline), correctness by suite and operator.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "planner/run_scores.h"
#include "backendbench/verdict.h"

namespace backendbench::planner {

// The backends of a run as run.json names them (kernels_label, op_libraries).
BackendNames backend_names(const nlohmann::json& run);
// The scores of each backend group of a run (backend_scores in run_scores.h) as JSON.
nlohmann::json group_scores(const std::vector<Verdict>& verdicts, const nlohmann::json& run, double p);

// The data the page draws from (also what tests read back): title, run, p, groups, rows, failures,
// cases, findings (findings.h: wrong and slow kernels, skipped tests) and runs (each run's facts
// as [what, value] rows, paths relative to where it started).
nlohmann::json report_data(const std::vector<Verdict>& verdicts, const nlohmann::json& run);

// One results folder of a report over several: its verdicts, its run.json, and the tag its
// backends carry on the page.
struct ResultsRun {
  std::string tag;
  std::vector<Verdict> verdicts;
  nlohmann::json run;
  std::vector<std::string> unreadable;  // verdict lines that name no case, located (verdict.h)
};
// Tags for several results folders: each run's GPU model ("CPU" without one) where these differ
// (one folder per GPU model), else the folders' names; numbered where two are still alike.
std::vector<std::string> run_tags(const std::vector<std::string>& folders, const std::vector<nlohmann::json>& runs);
// Several runs on one page: each run's data as report_data makes it, its backends and groups
// named "<tag>: <name>", every run's facts; one run's data is report_data's.
nlohmann::json combined_report_data(const std::vector<ResultsRun>& runs);

// The page. `plotly_js`: the text of plotly.min.js ("" draws a note instead of the plots).
std::string report_html(const nlohmann::json& data, const std::string& templates_directory, const std::string& plotly_js);

// `text` escaped for HTML text and attribute values (the report's and compare's pages).
std::string html_text(const std::string& text);

}  // namespace backendbench::planner
