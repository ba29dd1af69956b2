// Verdicts as JSON; see verdict.h.
#include "backendbench/verdict.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "backendbench/files.h"
#include "backendbench/settings.h"

namespace backendbench {

bool Verdict::has_flag(const std::string& flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

std::string Verdict::where() const {
  return op + " case " + case_name + " " + arguments + " (" + trace_file + ":" + std::to_string(trace_line) + ")";
}

const char* status_name(Verdict::Status status) {
  switch (status) {
    case Verdict::Status::kPassed: return "passed";
    case Verdict::Status::kFailed: return "failed";
    case Verdict::Status::kSkipped: return "skipped";
  }
  return "unknown";
}

std::string verdict_json(const Verdict& verdict) {
  nlohmann::json document = {
      {"schema", "backendbench-verdict"},
      {"version", kVerdictSchemaVersion},
      {"suite", verdict.suite},
      {"operator", verdict.op},
      {"case", verdict.case_name},
      {"arguments", verdict.arguments},
      {"source", {{"file", verdict.trace_file}, {"line", verdict.trace_line}}},
      {"count", verdict.count},
      {"models", verdict.models},
      {"backend", verdict.backend},
      {"kernel_file", verdict.kernel_file},
      {"device", verdict.device},
      {"frontend", verdict.frontend},
      {"status", status_name(verdict.status)},
      {"skip_reason", verdict.skip_reason},
      {"draws", verdict.draws},
      {"failed_draw", verdict.failed_draw},
      {"salt", salt_text(verdict.salt)},
      {"errors", verdict.errors},
      {"max_abs_error", verdict.max_abs_error},
      {"max_rel_error", verdict.max_rel_error},
      {"flags", verdict.flags},
  };
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckOutcome& check : verdict.checks) {
    checks.push_back({{"check", check.check}, {"passed", check.passed}, {"message", check.message}});
  }
  document["checks"] = checks;
  if (!verdict.gpu.empty()) document["gpu"] = verdict.gpu;  // only where CTest gave the entry a GPU
  if (verdict.case_ms >= 0) document["case_ms"] = verdict.case_ms;  // only where a process ran the case
  if (verdict.timing) {
    const TimingFigures& t = *verdict.timing;
    document["timing"] = {{"reference_us", t.reference_us}, {"kernel_us", t.kernel_us},
                          {"kernel_mean_us", t.kernel_mean_us}, {"speedup", t.speedup},
                          {"samples", t.samples}, {"iqr_pct", t.iqr_pct},
                          {"reference_iqr_pct", t.reference_iqr_pct}, {"bytes", t.bytes},
                          {"flops", t.flops}, {"GBps", t.gbps},
                          {"TFLOPps", t.tflops}, {"pct_peak_bw", t.pct_peak_bw},
                          {"pct_peak_flops", t.pct_peak_flops}, {"launch_overhead_us", t.launch_overhead_us},
                          {"hidden_work_us", t.hidden_work_us}};
  } else {
    document["timing"] = nullptr;
  }
  // Invalid UTF-8 in a message (a kernel's exception text) is replaced, never a throw.
  return document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Verdict verdict_from_json(const std::string& line) {
  const nlohmann::json json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || json.value("schema", "") != "backendbench-verdict" ||
      json.value("version", 0) != kVerdictSchemaVersion) {
    throw std::invalid_argument("not a backendbench-verdict of version " + std::to_string(kVerdictSchemaVersion) + ": " +
                                line.substr(0, 80));
  }
  Verdict verdict;
  verdict.suite = json.value("suite", "");
  verdict.op = json.value("operator", "");
  verdict.case_name = json.value("case", "");
  verdict.arguments = json.value("arguments", "");
  // Fields are read with defaults (a line may come from another tool or an older run); a field
  // of the wrong type throws nlohmann's type_error, which read_verdicts locates.
  const nlohmann::json source = json.value("source", nlohmann::json::object());
  verdict.trace_file = source.value("file", "");
  verdict.trace_line = source.value("line", 0);
  verdict.count = json.value("count", int64_t{0});
  verdict.models = json.value("models", "");
  verdict.backend = json.value("backend", "");
  verdict.kernel_file = json.value("kernel_file", "");
  verdict.device = json.value("device", "");
  verdict.gpu = json.value("gpu", "");
  verdict.frontend = json.value("frontend", "");
  const std::string status = json.value("status", "");
  verdict.status = status == "passed"    ? Verdict::Status::kPassed
                   : status == "skipped" ? Verdict::Status::kSkipped
                                         : Verdict::Status::kFailed;
  verdict.skip_reason = json.value("skip_reason", "");
  verdict.draws = json.value("draws", 0);
  verdict.case_ms = json.value("case_ms", int64_t{-1});
  verdict.failed_draw = json.value("failed_draw", 0);
  const std::string salt = json.value("salt", "0x0");
  const std::optional<uint64_t> parsed_salt = parse_salt(salt);
  if (!parsed_salt) throw std::invalid_argument("salt \"" + salt + "\" is not a 64-bit hexadecimal number");
  verdict.salt = *parsed_salt;
  for (const auto& check : json.value("checks", nlohmann::json::array())) {
    verdict.checks.push_back({check.value("check", ""), check.value("passed", false), check.value("message", "")});
  }
  verdict.errors = json.value("errors", std::vector<std::string>{});
  verdict.max_abs_error = json.value("max_abs_error", 0.0);
  verdict.max_rel_error = json.value("max_rel_error", 0.0);
  verdict.flags = json.value("flags", std::vector<std::string>{});
  if (json.contains("timing") && json["timing"].is_object()) {
    const nlohmann::json& t = json["timing"];
    verdict.timing = TimingFigures{t.value("reference_us", 0.0),  t.value("kernel_us", 0.0),
                                   t.value("kernel_mean_us", 0.0), t.value("speedup", 0.0),
                                   t.value("samples", 0),          t.value("iqr_pct", 0.0),
                                   t.value("reference_iqr_pct", 0.0), t.value("bytes", 0.0),
                                   t.value("flops", 0.0),          t.value("GBps", 0.0),
                                   t.value("TFLOPps", 0.0),        t.value("pct_peak_bw", 0.0),
                                   t.value("pct_peak_flops", 0.0), t.value("launch_overhead_us", 0.0),
                                   t.value("hidden_work_us", 0.0)};
  }
  return verdict;
}

std::vector<Verdict> read_verdicts(const std::string& path) {
  std::ifstream in(path);
  std::vector<Verdict> verdicts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    try {
      verdicts.push_back(verdict_from_json(line));
    } catch (const std::exception& error) {
      throw std::invalid_argument(path + ":" + std::to_string(number) + ":1: error: " + error.what() +
                                  "; expected one backendbench-verdict JSON object per line (README, Verdicts)");
    }
  }
  return verdicts;
}

void start_verdicts(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) files::make_directories(path.substr(0, slash));
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write verdicts to " + path);
}

void append_verdict(const std::string& path, const Verdict& verdict) {
  std::ofstream out(path, std::ios::app);
  out << verdict_json(verdict) << "\n";
  out.flush();
  if (!out) throw std::runtime_error("cannot append a verdict to " + path);
}

}  // namespace backendbench
