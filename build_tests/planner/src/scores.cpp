// Speedup aggregation of ./bench; see scores.h for the definitions.
#include "planner/scores.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "backendbench/score_group.h"
#include "language/json_text.h"
#include "planner/run_scores.h"

namespace backendbench {

Summary summarize(const std::vector<Verdict>& verdicts) {
  Summary summary;
  summary.cases = verdicts;
  std::map<std::pair<std::string, std::string>, std::vector<double>> logs;  // (op, backend) → log speedups
  std::map<std::pair<std::string, std::string>, OperatorScore> rows;
  std::map<std::pair<std::string, std::string>, std::string> groups;
  for (const Verdict& verdict : verdicts) {
    const std::string group = score_group(verdict.backend);
    if (group.empty() || verdict.status == Verdict::Status::kSkipped) continue;
    const auto key = std::make_pair(verdict.op, verdict.backend);
    OperatorScore& row = rows[key];
    row.op = verdict.op;
    row.backend = verdict.backend;
    groups[key] = group;
    ++row.cases;
    if (!(verdict.passed() && verdict.timing && verdict.timing->speedup > 0)) ++row.failed;
    logs[key].push_back(std::log(counted_speedup(verdict)));
  }
  std::map<std::string, std::vector<const OperatorScore*>> members;
  for (auto& [key, row] : rows) {
    double sum = 0;
    for (double value : logs[key]) sum += value;
    row.geomean_speedup = std::exp(sum / static_cast<double>(logs[key].size()));
    summary.rows.push_back(row);
  }
  for (const OperatorScore& row : summary.rows) members[groups[{row.op, row.backend}]].push_back(&row);
  for (const auto& [group, scored] : members) {
    GroupScore& score = summary.groups[group];
    score.rows = static_cast<int>(scored.size());
    double total = 0;
    for (const OperatorScore* row : scored) total += std::log(row->geomean_speedup);
    score.geomean_speedup = std::exp(total / static_cast<double>(scored.size()));
    for (double p : kPerfAtP) {
      int fast = 0;
      for (const OperatorScore* row : scored) fast += row->correct() && row->geomean_speedup > p;
      score.perf_at[p] = static_cast<double>(fast) / static_cast<double>(scored.size());
    }
  }
  return summary;
}

std::string Summary::text() const {
  std::ostringstream out;
  char line[256];
  out << "\nspeedup over aten per (operator, backend) (geomean over cases; a failed case counts as 1.0)\n";
  std::snprintf(line, sizeof(line), "  %-44s %-12s %7s %7s %9s\n", "operator", "backend", "cases", "failed", "speedup");
  out << line;
  for (const OperatorScore& row : rows) {
    std::snprintf(line, sizeof(line), "  %-44s %-12s %7d %7d %8.3fx\n", row.op.c_str(), row.backend.c_str(), row.cases,
                  row.failed, row.geomean_speedup);
    out << line;
  }
  for (const auto& [group, score] : groups) {
    std::snprintf(line, sizeof(line), "  %s: geomean speedup %.3fx over %d (operator, backend) rows;", group.c_str(),
                  score.geomean_speedup, score.rows);
    out << line;
    for (const auto& [p, value] : score.perf_at) {
      std::snprintf(line, sizeof(line), " perf@%.1f %.2f", p, value);
      out << line;
    }
    out << "\n";
  }
  return out.str();
}

std::string Summary::json() const {
  nlohmann::json document;
  document["definitions"] =
      "speedup = reference time / kernel time (interquartile mean of interleaved pair ratios); a failed case (any "
      "check, an error, wrong when timed, or flagged suspect or hidden_work) counts as 1.0 and makes its row "
      "incorrect; a case flagged speedup_uncertain (measured on a busy CPU, or with too wide an interval) counts "
      "at most 1.0; a row is one (operator, backend), its speedup the geomean over its cases; a group's speedup is the "
      "geomean over its rows; perf@p = fraction of rows correct on every case with speedup > p";
  for (const auto& [group, score] : groups) {
    nlohmann::json entry = {{"geomean_speedup", score.geomean_speedup}, {"rows", score.rows}};
    for (const auto& [p, value] : score.perf_at) {
      char key[32];
      std::snprintf(key, sizeof(key), "perf@%.1f", p);
      entry[key] = value;
    }
    document["groups"][group] = entry;
  }
  document["rows"] = nlohmann::json::array();
  for (const OperatorScore& row : rows) {
    document["rows"].push_back({{"operator", row.op}, {"backend", row.backend}, {"cases", row.cases},
                                {"failed", row.failed}, {"geomean_speedup", row.geomean_speedup}});
  }
  document["cases"] = nlohmann::json::array();
  for (const Verdict& verdict : cases) document["cases"].push_back(json_text::parse(verdict_json(verdict)));
  return json_text::dump(document, 1) + "\n";
}

}  // namespace backendbench
