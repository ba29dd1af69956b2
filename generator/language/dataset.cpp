// Reader of the dataset's JSON form (records as BackendBench's dataset exports them).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "language/parser.h"

namespace backendbench::parse {
namespace {

using nlohmann::json;

const char* const kRecordForm =
    "a record with \"op_name\" (string) and \"args\" (string), as in {\"op_name\": \"aten.add.Tensor\", "
    "\"args\": \"((T([2], f16), T([2], f16)), {})\", \"count\": 1}";

template <typename T>
T field(const json& record, const char* name, T fallback, const std::string& path, int position) {
  auto found = record.find(name);
  if (found == record.end() || found->is_null()) return fallback;
  try {
    return found->get<T>();
  } catch (const json::exception&) {
    throw DiagnosticError({path, position, 0, std::string("field \"") + name + "\" has the wrong type (" + found->type_name() + ")",
                           kRecordForm});
  }
}

std::optional<double> number_field(const json& record, const char* name) {
  auto found = record.find(name);
  if (found == record.end() || !found->is_number()) return std::nullopt;  // null / NaN exported as null
  return found->get<double>();
}

// A list of strings, or one string (comma-separated), or absent.
std::vector<std::string> string_list(const json& record, const char* name) {
  std::vector<std::string> items;
  auto found = record.find(name);
  if (found == record.end() || found->is_null()) return items;
  if (found->is_array()) {
    for (const json& item : *found) {
      if (item.is_string()) items.push_back(item.get<std::string>());
    }
  } else if (found->is_string()) {
    std::string text = found->get<std::string>();
    for (size_t start = 0; start <= text.size();) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      std::string item = text.substr(start, comma - start);
      item.erase(0, item.find_first_not_of(' '));
      if (!item.empty()) items.push_back(item);
      start = comma + 1;
    }
  }
  return items;
}

}  // namespace

ParseResult parse_dataset_json(std::string_view text, const std::string& path) {
  ParseResult result;
  result.trace.path = path;
  // Records with the line (JSON Lines) or index (array) that locates them.
  std::vector<std::pair<int, json>> records;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') {
    try {
      const json array = json::parse(text);
      int index = 0;
      for (const json& record : array) records.emplace_back(++index, record);
    } catch (const json::parse_error& error) {
      result.errors.push_back({path, 0, 0, std::string("malformed JSON: ") + error.what(), "a JSON array of records"});
      return result;
    }
  } else {
    int line_number = 0;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view line = text.substr(start, end - start);
      start = end + 1;
      ++line_number;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      try {
        records.emplace_back(line_number, json::parse(line));
      } catch (const json::parse_error& error) {
        result.errors.push_back({path, line_number, 0, std::string("malformed JSON: ") + error.what(),
                                 "one JSON record per line (JSON Lines) or a JSON array"});
      }
    }
  }
  std::map<std::string, size_t> section_of;
  for (const auto& [position, record] : records) {
    try {
      if (!record.is_object()) throw DiagnosticError({path, position, 0, "record is not an object", kRecordForm});
      const auto op_name = record.find("op_name");
      const auto args = record.find("args");
      if (op_name == record.end() || !op_name->is_string() || args == record.end() || !args->is_string()) {
        throw DiagnosticError({path, position, 0, "record lacks \"op_name\" or \"args\" as strings", kRecordForm});
      }
      CaseLine case_line;
      case_line.line = position;
      case_line.count = field<int64_t>(record, "count", 1, path, position);
      try {
        case_line.arguments = parse_arguments(args->get<std::string>(), path, position, 1);
      } catch (const DiagnosticError& error) {
        Diagnostic diagnostic = error.diagnostic();
        diagnostic.problem = "in \"args\" at column " + std::to_string(diagnostic.column) + ": " + diagnostic.problem;
        diagnostic.column = 0;
        throw DiagnosticError(diagnostic);
      }
      DatasetFields fields;
      fields.uuid = field<std::string>(record, "uuid", "", path, position);
      fields.included_in_benchmark = field<bool>(record, "included_in_benchmark", true, path, position);
      fields.why_excluded = string_list(record, "why_excluded");
      fields.runnable = field<bool>(record, "runnable", true, path, position);
      fields.is_synthetic = field<bool>(record, "is_synthetic", case_line.count == 0, path, position);
      fields.is_overhead_dominated_op = field<bool>(record, "is_overhead_dominated_op", false, path, position);
      fields.runtime_ms = number_field(record, "runtime_ms");
      fields.relative_runtime_to_kernel_launch = number_field(record, "relative_runtime_to_kernel_launch");
      fields.in_models = string_list(record, "in_models");
      case_line.dataset = std::move(fields);
      const std::string name = op_name->get<std::string>();
      auto [section, inserted] = section_of.emplace(name, result.trace.operators.size());
      if (inserted) result.trace.operators.push_back({name, position, {}});
      result.trace.operators[section->second].cases.push_back(std::move(case_line));
    } catch (const DiagnosticError& error) {
      result.errors.push_back(error.diagnostic());
    }
  }
  std::stable_sort(result.errors.begin(), result.errors.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
  return result;
}

}  // namespace backendbench::parse
