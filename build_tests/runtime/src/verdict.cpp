// Verdicts as JSON; see verdict.h.
#include "backendbench/verdict.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

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

void start_verdicts(const std::string& path) {
  const std::filesystem::path file(path);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
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
