// Jobs as JSON, and the one rule for a case without a verdict; see job.h.
#include "language/job.h"

#include "language/json_text.h"
#include "language/naming.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace backendbench {
namespace {

constexpr const char* kExpectedLine =
    "one backendbench-job JSON object per line (docs/schemas.md, Jobs)";

const std::set<std::string>& known_fields() {
  static const std::set<std::string> fields = {"schema", "version", "suite",        "operator", "backend", "mode",
                                               "cases",  "salt",    "case_timeout", "draws",    "device",
                                               "part",   "parts"};
  return fields;
}

// Throws "<where>:<line>:<column>: error: <what>; expected <form>", the column that of `field`'s
// key in the line (1 when it has none).
[[noreturn]] void fail(const std::string& where, int line_number, const std::string& line, const std::string& field,
                       const std::string& what, const std::string& expected) {
  size_t column = 1;
  if (!field.empty()) {
    const size_t at = line.find("\"" + field + "\"");
    if (at != std::string::npos) column = at + 1;
  }
  throw JobError(Diagnostic{where, line_number, static_cast<int>(column), what, expected});
}

Job job_from_line(const std::string& line, const std::string& where, int number) {
  nlohmann::json document;
  try {
    document = json_text::parse(line);
  } catch (const nlohmann::json::parse_error& error) {
    const size_t column = error.byte == 0 ? 1 : error.byte;
    throw JobError(Diagnostic{where, number, static_cast<int>(column), "not JSON", kExpectedLine});
  }
  if (!document.is_object()) fail(where, number, line, "", "not a JSON object", kExpectedLine);
  for (const auto& [key, value] : document.items()) {
    if (!known_fields().count(key)) {
      fail(where, number, line, key, "unknown field \"" + key + "\"",
           "only schema, version, suite, operator, backend, mode, cases, salt, draws, case_timeout, device, part and parts");
    }
  }
  if (document.value("schema", nlohmann::json()) != "backendbench-job") {
    fail(where, number, line, "schema", "not a backendbench-job", "\"schema\": \"backendbench-job\"");
  }
  if (document.value("version", nlohmann::json()) != kJobSchemaVersion) {
    fail(where, number, line, "version", "unsupported version",
         "\"version\": " + std::to_string(kJobSchemaVersion));
  }
  Job job;
  const auto text_field = [&](const char* field, std::string& into) {
    const auto found = document.find(field);
    if (found == document.end() || !found->is_string() || found->get<std::string>().empty()) {
      fail(where, number, line, field, std::string("missing or empty \"") + field + "\"",
           std::string("\"") + field + "\" as a non-empty string");
    }
    into = found->get<std::string>();
  };
  text_field("suite", job.suite);
  text_field("operator", job.op);
  text_field("backend", job.backend);
  const std::string mode = document.value("mode", nlohmann::json("check")).is_string()
                               ? document.value("mode", std::string("check"))
                               : std::string();
  if (mode != "check" && mode != "time") fail(where, number, line, "mode", "bad mode", "\"check\" or \"time\"");
  job.mode = mode == "time" ? Job::Mode::kTime : Job::Mode::kCheck;
  if (document.contains("cases")) {
    const nlohmann::json& cases = document["cases"];
    if (!cases.is_array()) fail(where, number, line, "cases", "\"cases\" is not a list", "a list of case names");
    for (const nlohmann::json& name : cases) {
      if (!name.is_string() || name.get<std::string>().empty()) {
        fail(where, number, line, "cases", "a case name that is not a non-empty string", "a list of case names");
      }
      job.cases.push_back(name.get<std::string>());
    }
  }
  if (document.contains("salt")) {
    const nlohmann::json& salt = document["salt"];
    const std::optional<uint64_t> parsed = salt.is_string() ? parse_salt(salt.get<std::string>()) : std::nullopt;
    if (!parsed) fail(where, number, line, "salt", "bad salt", "a string such as \"0x0123456789abcdef\"");
    job.salt = *parsed;
  }
  if (document.contains("draws")) {
    const nlohmann::json& draws = document["draws"];
    if (!draws.is_number_integer() || draws.get<int64_t>() < 1 || draws.get<int64_t>() > 1000000) {
      fail(where, number, line, "draws", "bad draws", "an integer of at least 1");
    }
    job.draws = draws.get<int>();
  }
  if (document.contains("case_timeout")) {
    const nlohmann::json& timeout = document["case_timeout"];
    if (!timeout.is_number_integer() || timeout.get<int64_t>() < 0 || timeout.get<int64_t>() > 86400 * 7) {
      fail(where, number, line, "case_timeout", "bad case_timeout", "a whole number of seconds, 0 for none");
    }
    job.case_timeout_seconds = timeout.get<int>();
  }
  if (document.contains("device")) {
    const nlohmann::json& device = document["device"];
    bool valid = device.is_string();
    if (valid) {
      const std::string text = device.get<std::string>();
      valid = text == "cpu" || text == "cuda";
      if (!valid && text.rfind("cuda:", 0) == 0 && text.size() > 5) {
        valid = text.find_first_not_of("0123456789", 5) == std::string::npos;
      }
      if (valid) job.device = text;
    }
    if (!valid) fail(where, number, line, "device", "bad device", "\"cpu\", \"cuda\" or \"cuda:<index>\"");
  }
  if (document.contains("part") || document.contains("parts")) {
    const nlohmann::json& part = document.value("part", nlohmann::json());
    const nlohmann::json& parts = document.value("parts", nlohmann::json());
    const bool valid = part.is_number_integer() && parts.is_number_integer() && parts.get<int64_t>() >= 1 &&
                       parts.get<int64_t>() <= 1000000 && part.get<int64_t>() >= 1 && part.get<int64_t>() <= parts.get<int64_t>();
    if (!valid) {
      fail(where, number, line, document.contains("part") ? "part" : "parts", "bad part",
           "\"part\" and \"parts\" together, whole numbers with 1 <= part <= parts");
    }
    job.part = part.get<int>();
    job.parts = parts.get<int>();
  }
  return job;
}

}  // namespace

Job Job::only(const std::string& case_name) const {
  Job one = *this;
  one.cases = {case_name};
  one.part = one.parts = 0;  // the case is named; a part of one case would select by position
  return one;
}

std::string Job::name() const {
  return suite + "/" + op + "/" + backend + (parts ? "/" + naming::part_name(part, parts) : "");
}

bool Job::in_part(size_t position) const {
  return parts <= 1 || position % static_cast<size_t>(parts) == static_cast<size_t>(part - 1);
}

int job_parts(size_t case_count, int cases_per_part) {
  if (cases_per_part <= 0 || case_count == 0) return 1;
  return static_cast<int>((case_count + cases_per_part - 1) / cases_per_part);
}

std::string job_json(const Job& job) {
  // Ordered as documented: schema and version first, then what the job runs.
  nlohmann::ordered_json document = {{"schema", "backendbench-job"}, {"version", kJobSchemaVersion},
                             {"suite", job.suite},           {"operator", job.op},
                             {"backend", job.backend},       {"mode", job.mode == Job::Mode::kTime ? "time" : "check"}};
  if (!job.cases.empty()) document["cases"] = job.cases;
  if (job.salt) document["salt"] = salt_text(*job.salt);
  if (job.draws) document["draws"] = *job.draws;
  if (job.case_timeout_seconds) document["case_timeout"] = *job.case_timeout_seconds;
  if (job.device) document["device"] = *job.device;
  if (job.parts) {
    document["part"] = job.part;
    document["parts"] = job.parts;
  }
  return json_text::dump_replacing_invalid_utf8(document);
}

std::vector<Job> parse_jobs(const std::string& text, const std::string& where) {
  std::vector<Job> jobs;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    jobs.push_back(job_from_line(line, where, number));
  }
  return jobs;
}

std::vector<Job> jobs_from_argument(const std::string& value) {
  const size_t first = value.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && value[first] == '{') return parse_jobs(value, "--backendbench_job");
  std::ifstream in(value);
  if (!in) {
    throw JobError(Diagnostic{value, 1, 1, "cannot read the job file",
                              "a backendbench-job JSON object or the path of a JSON Lines file of them"});
  }
  std::stringstream text;
  text << in.rdbuf();
  std::vector<Job> jobs = parse_jobs(text.str(), value);
  if (jobs.empty()) throw JobError(Diagnostic{value, 1, 1, "no jobs in the file", kExpectedLine});
  return jobs;
}

std::string served_entry_address(const std::string& prefix, const std::string& executable, const std::string& gpu, int k) {
  return prefix + "/" + executable.substr(executable.find_last_of('/') + 1) + "/" + gpu + "/" + std::to_string(k);
}

std::string salt_text(uint64_t salt) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(salt));
  return text;
}

std::optional<uint64_t> parse_salt(const std::string& text) {
  if (text.empty() || text[0] == '-' || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const bool hex = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0;
  const unsigned long long value = std::strtoull(hex ? text.c_str() + 2 : text.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || *end != '\0' || (hex && text.size() == 2)) return std::nullopt;
  return value;
}

}  // namespace backendbench
