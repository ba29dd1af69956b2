// Verdicts as JSON; see verdict.h.
#include "backendbench/verdict.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "backendbench/files.h"
#include "backendbench/json_numbers.h"
#include "backendbench/settings.h"
#include "language/json_text.h"

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
      {"max_abs_error", json_number(verdict.max_abs_error)},
      {"max_rel_error", json_number(verdict.max_rel_error)},
      {"flags", verdict.flags},
  };
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckOutcome& check : verdict.checks) {
    checks.push_back({{"check", check.check}, {"passed", check.passed}, {"message", check.message}});
  }
  document["checks"] = checks;
  if (!verdict.gpu.empty()) document["gpu"] = verdict.gpu;  // only where CTest gave the entry a GPU
  if (verdict.case_ms >= 0) document["case_ms"] = verdict.case_ms;  // only where a process ran the case
  if (verdict.aten_share >= 0) document["aten_share"] = json_number(verdict.aten_share);  // only where measured
  if (verdict.timing) {
    const TimingFigures& t = *verdict.timing;
    document["timing"] = {{"reference_us", json_number(t.reference_us)}, {"kernel_us", json_number(t.kernel_us)},
                          {"kernel_mean_us", json_number(t.kernel_mean_us)}, {"speedup", json_number(t.speedup)},
                          {"speedup_low", json_number(t.speedup_low)}, {"speedup_high", json_number(t.speedup_high)},
                          {"other_load", json_number(t.other_load)}, {"cpu_waited", json_number(t.cpu_waited)},
                          {"back_to_back_speedup", json_number(t.back_to_back_speedup)},
                          {"samples", t.samples}, {"iqr_pct", json_number(t.iqr_pct)},
                          {"reference_iqr_pct", json_number(t.reference_iqr_pct)}, {"bytes", json_number(t.bytes)},
                          {"flops", json_number(t.flops)}, {"GBps", json_number(t.gbps)},
                          {"TFLOPps", json_number(t.tflops)}, {"pct_peak_bw", json_number(t.pct_peak_bw)},
                          {"pct_peak_flops", json_number(t.pct_peak_flops)},
                          {"launch_overhead_us", json_number(t.launch_overhead_us)},
                          {"hidden_work_us", json_number(t.hidden_work_us)}};
  } else {
    document["timing"] = nullptr;
  }
  // Invalid UTF-8 in a message (a kernel's exception text) is replaced, never a throw.
  return json_text::dump_replacing_invalid_utf8(document);
}

Verdict verdict_from_json(const std::string& line) {
  const nlohmann::json json = json_text::parse_or_discarded(line);
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
  verdict.aten_share = number_field(json, "aten_share", -1.0);
  verdict.failed_draw = json.value("failed_draw", 0);
  const std::string salt = json.value("salt", "0x0");
  const std::optional<uint64_t> parsed_salt = parse_salt(salt);
  if (!parsed_salt) throw std::invalid_argument("salt \"" + salt + "\" is not a 64-bit hexadecimal number");
  verdict.salt = *parsed_salt;
  for (const auto& check : json.value("checks", nlohmann::json::array())) {
    verdict.checks.push_back({check.value("check", ""), check.value("passed", false), check.value("message", "")});
  }
  verdict.errors = json.value("errors", std::vector<std::string>{});
  verdict.max_abs_error = number_field(json, "max_abs_error", 0.0);
  verdict.max_rel_error = number_field(json, "max_rel_error", 0.0);
  verdict.flags = json.value("flags", std::vector<std::string>{});
  if (json.contains("timing") && json["timing"].is_object()) {
    const nlohmann::json& t = json["timing"];
    const auto figure = [&t](const char* key) { return number_field(t, key, 0.0); };
    TimingFigures& figures = verdict.timing.emplace();
    figures.reference_us = figure("reference_us");
    figures.kernel_us = figure("kernel_us");
    figures.kernel_mean_us = figure("kernel_mean_us");
    figures.speedup = figure("speedup");
    figures.speedup_low = figure("speedup_low");
    figures.speedup_high = figure("speedup_high");
    figures.other_load = number_field(t, "other_load", -1.0);
    figures.cpu_waited = number_field(t, "cpu_waited", -1.0);
    figures.back_to_back_speedup = number_field(t, "back_to_back_speedup", -1.0);
    figures.samples = t.value("samples", 0);
    figures.iqr_pct = figure("iqr_pct");
    figures.reference_iqr_pct = figure("reference_iqr_pct");
    figures.bytes = figure("bytes");
    figures.flops = figure("flops");
    figures.gbps = figure("GBps");
    figures.tflops = figure("TFLOPps");
    figures.pct_peak_bw = figure("pct_peak_bw");
    figures.pct_peak_flops = figure("pct_peak_flops");
    figures.launch_overhead_us = figure("launch_overhead_us");
    figures.hidden_work_us = figure("hidden_work_us");
  }
  return verdict;
}

namespace {

// A failed verdict for the case a bad line names, where it names one (a JSON object with the
// operator, the backend and the case as strings): the line's error is that case's failure.
std::optional<Verdict> stand_in_for(const std::string& line, const std::string& error) {
  const nlohmann::json json = json_text::parse_or_discarded(line);
  if (!json.is_object()) return std::nullopt;
  for (const char* key : {"operator", "backend", "case"}) {
    if (!json.contains(key) || !json[key].is_string()) return std::nullopt;
  }
  Verdict verdict;
  const auto text = [&json](const char* key) {
    return json.contains(key) && json[key].is_string() ? json[key].get<std::string>() : std::string();
  };
  verdict.suite = text("suite");
  verdict.op = text("operator");
  verdict.backend = text("backend");
  verdict.case_name = text("case");
  verdict.frontend = text("frontend");
  verdict.kernel_file = text("kernel_file");
  verdict.device = text("device");
  if (const std::optional<uint64_t> salt = parse_salt(text("salt"))) verdict.salt = *salt;
  verdict.status = Verdict::Status::kFailed;
  verdict.errors = {error};
  return verdict;
}

}  // namespace

VerdictFile read_verdicts(const std::string& path) {
  std::ifstream in(path);
  VerdictFile file;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    try {
      file.verdicts.push_back(verdict_from_json(line));
    } catch (const std::exception& error) {
      const std::string located = path + ":" + std::to_string(number) + ":1: error: " + error.what() +
                                  "; expected one backendbench-verdict JSON object per line (docs/schemas.md, Verdicts)";
      if (std::optional<Verdict> stand_in = stand_in_for(line, "unreadable verdict: " + located)) {
        file.verdicts.push_back(std::move(*stand_in));
      } else {
        file.unreadable.push_back(located);
      }
    }
  }
  return file;
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

std::string no_cuda_device_reason(const std::string& kernel_name) {
  return kernel_name + " is a CUDA kernel and this machine has no CUDA device";
}

}  // namespace backendbench
