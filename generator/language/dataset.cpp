// Reader of the dataset's JSON form (records as BackendBench's dataset exports them).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "language/json_text.h"
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

// "count": a non-negative integer of at most 18 digits, as a trace's 'cnt: ' takes; 1 when absent.
int64_t count_field(const json& record, const std::string& path, int position) {
  const auto found = record.find("count");
  if (found == record.end() || found->is_null()) return 1;
  constexpr uint64_t kLargest = 999'999'999'999'999'999ull;
  if (found->is_number_unsigned()) {
    if (found->get<uint64_t>() <= kLargest) return static_cast<int64_t>(found->get<uint64_t>());
  } else if (found->is_number_integer() && found->get<int64_t>() >= 0) {
    return found->get<int64_t>();
  }
  throw DiagnosticError({path, position, 0, "\"count\" is " + excerpt(found->dump()),
                         "a non-negative integer of at most 18 digits, as in \"count\": 3"});
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

// One record's text and where it starts.
struct RecordText {
  std::string_view text;
  int line = 1;
  int column = 1;
  bool in_array = false;
};

// Line and column of byte `offset` of a record (its start for npos).
std::pair<int, int> locate(const RecordText& record, size_t offset) {
  if (offset == std::string_view::npos || offset > record.text.size()) return {record.line, record.column};
  int line = record.line;
  int column = record.column;
  for (size_t i = 0; i < offset; ++i) {
    if (record.text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// nlohmann's message without its "[json.exception....] parse error at line 1, column 5: " prefix
// (our own location replaces it), shortened.
std::string json_message(const json::exception& error) {
  std::string message = error.what();
  const size_t bracket = message.find("] ");
  if (bracket != std::string::npos) message.erase(0, bracket + 2);
  const size_t located = message.find(": ");
  if (message.rfind("parse error", 0) == 0 && located != std::string::npos) message.erase(0, located + 2);
  if (message.size() > 200) message = message.substr(0, 200) + "...";
  return message;
}

// Splits the text into records without parsing them: the elements of a top-level array, or
// its non-blank lines (JSON Lines). Checks, in one linear pass, what json::parse would not:
// nesting depth (Limits::kNesting) and record size (Limits::kLineBytes). Problems become
// diagnostics, and the records they concern are left out.
std::vector<RecordText> split_records(std::string_view text, const std::string& path, std::vector<Diagnostic>& errors) {
  std::vector<RecordText> records;
  const size_t first = text.find_first_not_of(" \t\r\n");
  const bool is_array = first != std::string_view::npos && text[first] == '[';
  int line = 1;
  int column = 1;
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  bool record_failed = false;  // the current record already has a diagnostic
  size_t record_start = std::string_view::npos;
  RecordText current;
  auto fail = [&](std::string problem, std::string expected) {
    if (!record_failed) errors.push_back({path, line, column, std::move(problem), std::move(expected)});
    record_failed = true;
  };
  auto finish = [&](size_t end) {  // the record from record_start to end (exclusive)
    if (record_start != std::string_view::npos && !record_failed) {
      current.text = text.substr(record_start, end - record_start);
      if (current.text.size() > Limits::kLineBytes) {
        errors.push_back({path, current.line, current.column, "record of " + std::to_string(current.text.size()) + " bytes",
                          "at most " + std::to_string(Limits::kLineBytes) + " bytes per record"});
      } else {
        records.push_back(current);
      }
    }
    record_start = std::string_view::npos;
    record_failed = false;
  };
  auto begin = [&](size_t at) {
    record_start = at;
    current = {{}, line, column, is_array};
  };
  const int record_depth = is_array ? 1 : 0;  // depth at which records begin
  bool array_closed = false;
  bool after_comma = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool blank = c == ' ' || c == '\t' || c == '\r' || c == '\n';
    if (!is_array && c == '\n') {  // JSON Lines: a record ends with its line
      if (in_string) fail("line break inside a JSON string", "'\"' closing it on the same line");
      finish(i);
      in_string = escaped = false;
      depth = 0;
    } else if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (array_closed) {
      if (!blank) {
        errors.push_back({path, line, column, "text after the array of records", "nothing after the closing ']'"});
        break;
      }
    } else if (is_array && depth == 1 && (c == ',' || c == ']')) {
      if (record_start == std::string_view::npos && (c == ',' || after_comma)) {
        fail("missing record before '" + std::string(1, c) + "'", "a record between commas");
      }
      finish(i);
      after_comma = c == ',';
      if (c == ']') {
        depth = 0;
        array_closed = true;
      }
    } else if (!blank) {
      if (record_start == std::string_view::npos && depth == record_depth && !(is_array && i == first)) begin(i);
      if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        if (++depth - record_depth > Limits::kNesting) {
          fail("JSON nested more than " + std::to_string(Limits::kNesting) + " levels deep",
               "at most " + std::to_string(Limits::kNesting) + " levels");
        }
      } else if ((c == ']' || c == '}') && depth > record_depth) {
        --depth;
      }
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  if (is_array && !array_closed) {
    errors.push_back({path, line, column, "unterminated JSON array", "']' closing the array of records"});
  } else if (!is_array) {
    finish(text.size());
  }
  return records;
}

}  // namespace

ParseResult parse_dataset_json(std::string_view text, const std::string& path) {
  ParseResult result;
  result.trace.path = path;
  std::vector<std::pair<int, json>> records;  // with the line each starts on
  for (const RecordText& record : split_records(text, path, result.errors)) {
    try {
      records.emplace_back(record.line, json_text::parse(record.text));
    } catch (const json::exception& error) {
      // parse_error knows the byte; out_of_range (a number beyond a double, 1e333) does not.
      const auto* parse_error = dynamic_cast<const json::parse_error*>(&error);
      const size_t byte = parse_error != nullptr && parse_error->byte > 0 ? parse_error->byte - 1 : 0;
      const auto [line, column] = locate(record, parse_error != nullptr ? byte : std::string_view::npos);
      result.errors.push_back({path, line, column, "malformed JSON: " + json_message(error),
                               record.in_array ? "a JSON array of records" : "one JSON record per line (JSON Lines) or a JSON array"});
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
      // What the text form checks: the operator name, the count, and one line of arguments.
      const std::string& name_text = op_name->get_ref<const std::string&>();
      if (!is_operator_name(name_text)) {
        throw DiagnosticError({path, position, 0, "malformed \"op_name\" '" + excerpt(name_text) + "'",
                               "namespace.name.overload, as in aten.add.Tensor"});
      }
      const std::string& args_text = args->get_ref<const std::string&>();
      if (args_text.find_first_of("\r\n") != std::string::npos) {
        throw DiagnosticError({path, position, 0, "\"args\" holds a line break",
                               "the arguments on one line, as a trace's 'cnt: ' line holds them"});
      }
      CaseLine case_line;
      case_line.line = position;
      case_line.count = count_field(record, path, position);
      try {
        case_line.arguments = parse_arguments(args_text, path, position, 1);
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
  warn_if_empty(result);
  return result;
}

}  // namespace backendbench::parse
