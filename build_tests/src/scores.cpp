// Speedup aggregation of ./bench; see scores.h for the definitions.
#include "backendbench/scores.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace backendbench {

Summary summarize(const std::vector<ScoredCase>& cases) {
  Summary summary;
  summary.cases = cases;
  std::map<std::string, std::map<std::string, std::vector<double>>> logs;  // backend → op → log speedups
  for (const ScoredCase& scored : cases) {
    if (scored.backend == "aten") continue;
    OperatorScore& op = summary.backends[scored.backend].operators[scored.op];
    ++op.cases;
    const bool counted = scored.correct && scored.speedup > 0;
    if (!counted) ++op.failed;
    logs[scored.backend][scored.op].push_back(counted ? std::log(scored.speedup) : 0.0);  // failed: 1.0
  }
  for (auto& [backend, score] : summary.backends) {
    double total = 0;
    for (auto& [op, op_score] : score.operators) {
      const std::vector<double>& values = logs[backend][op];
      double sum = 0;
      for (double value : values) sum += value;
      op_score.geomean_speedup = std::exp(sum / static_cast<double>(values.size()));
      total += std::log(op_score.geomean_speedup);
    }
    score.geomean_speedup = std::exp(total / static_cast<double>(score.operators.size()));
    for (double p : kPerfAtP) {
      int fast = 0;
      for (const auto& [op, op_score] : score.operators) fast += op_score.correct() && op_score.geomean_speedup > p;
      score.perf_at[p] = static_cast<double>(fast) / static_cast<double>(score.operators.size());
    }
  }
  return summary;
}

std::string Summary::text() const {
  std::ostringstream out;
  char line[256];
  for (const auto& [backend, score] : backends) {
    out << "\nbackend " << backend << ": speedup over aten (geomean over cases, then operators)\n";
    std::snprintf(line, sizeof(line), "  %-44s %7s %7s %9s\n", "operator", "cases", "failed", "speedup");
    out << line;
    for (const auto& [op, op_score] : score.operators) {
      std::snprintf(line, sizeof(line), "  %-44s %7d %7d %8.3fx\n", op.c_str(), op_score.cases, op_score.failed,
                    op_score.geomean_speedup);
      out << line;
    }
    std::snprintf(line, sizeof(line), "  overall geomean speedup %.3fx;", score.geomean_speedup);
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
      "speedup = reference time / kernel time (median over interleaved pairs); a failed case counts as 1.0 and makes "
      "its operator incorrect; operator speedup = geomean over its cases; overall = geomean over operators; perf@p = "
      "fraction of operators correct on every case with speedup > p";
  for (const auto& [backend, score] : backends) {
    nlohmann::json entry;
    entry["geomean_speedup"] = score.geomean_speedup;
    for (const auto& [p, value] : score.perf_at) {
      char key[32];
      std::snprintf(key, sizeof(key), "perf@%.1f", p);
      entry[key] = value;
    }
    for (const auto& [op, op_score] : score.operators) {
      entry["operators"][op] = {{"cases", op_score.cases}, {"failed", op_score.failed},
                                {"geomean_speedup", op_score.geomean_speedup}};
    }
    document["backends"][backend] = entry;
  }
  for (const ScoredCase& scored : cases) {
    document["cases"].push_back({{"op", scored.op}, {"case", scored.case_name}, {"backend", scored.backend},
                                 {"args", scored.arguments}, {"correct", scored.correct},
                                 {"reference_us", scored.reference_us}, {"kernel_us", scored.kernel_us},
                                 {"speedup", scored.speedup}, {"kernel_mean_us", scored.kernel_mean_us}});
  }
  return document.dump(1) + "\n";
}

}  // namespace backendbench
