// What entries cost, from earlier runs; see entry_costs.h.
#include "planner/entry_costs.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backendbench/files.h"
#include "language/json_text.h"

namespace backendbench::planner {
namespace {

constexpr const char* kSchema = "backendbench-case-costs";
constexpr int kVersion = 1;

std::string key_of(const std::string& suite, const std::string& op, const std::string& backend, const std::string& kind) {
  return suite + "/" + op + "/" + backend + "/" + kind;
}

}  // namespace

std::string device_kind(const std::string& device) { return device.substr(0, device.find(':')); }

CaseCosts CaseCosts::read(const std::string& path) {
  CaseCosts costs;
  std::ifstream in(path);
  if (!in) return costs;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json document = json_text::parse_or_discarded(text.str());
  // Only ever this program's own file: anything else is no history, never an error.
  if (!document.is_object() || document.value("schema", "") != kSchema || document.value("version", 0) != kVersion ||
      !document.contains("jobs") || !document["jobs"].is_object()) {
    return costs;
  }
  for (const auto& [key, value] : document["jobs"].items()) {
    if (!value.is_object()) continue;
    const Known known{value.value("cases", int64_t{0}), value.value("ms", int64_t{0})};
    if (known.cases > 0 && known.ms >= 0) costs.known_[key] = known;
  }
  return costs;
}

void CaseCosts::learn(const std::vector<Verdict>& verdicts) {
  std::map<std::string, Known> run;
  for (const Verdict& verdict : verdicts) {
    if (verdict.case_ms < 0 || verdict.frontend != "tests") continue;
    Known& known = run[key_of(verdict.suite, verdict.op, verdict.backend, device_kind(verdict.device))];
    ++known.cases;
    known.ms += verdict.case_ms;
  }
  for (const auto& [key, known] : run) known_[key] = known;
}

void CaseCosts::write(const std::string& path) const {
  nlohmann::json jobs = nlohmann::json::object();
  for (const auto& [key, known] : known_) jobs[key] = {{"cases", known.cases}, {"ms", known.ms}};
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) files::make_directories(path.substr(0, slash));
  files::write_whole(path, json_text::dump(nlohmann::json{{"schema", kSchema}, {"version", kVersion}, {"jobs", jobs}}, 1) + "\n");
}

std::optional<double> CaseCosts::per_case(const std::string& suite, const std::string& op, const std::string& backend,
                                          const std::string& kind) const {
  const auto found = known_.find(key_of(suite, op, backend, kind));
  if (found == known_.end()) return std::nullopt;
  return static_cast<double>(found->second.ms) / static_cast<double>(found->second.cases);
}

double longest_entry_ms(double total_ms, int at_once) { return std::max(1000.0, total_ms / (4.0 * std::max(1, at_once))); }

int parts_for(size_t cases, double estimated_ms, double longest_ms, int parts) {
  const int given = std::max(1, parts);
  if (cases == 0 || longest_ms <= 0) return given;
  const double needed = std::ceil(estimated_ms / longest_ms);
  const int wanted = needed > static_cast<double>(cases) ? static_cast<int>(cases) : static_cast<int>(needed);
  return std::max(given, wanted);
}

}  // namespace backendbench::planner
