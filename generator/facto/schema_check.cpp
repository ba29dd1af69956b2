// Checks FACTO specifications against schemas; see schema_check.h.
#include "facto/schema_check.h"

#include "language/diagnostic.h"

namespace backendbench::facto {

std::vector<SchemaParameter> schema_parameters(const std::string& schema_text) {
  std::vector<SchemaParameter> parameters;
  const size_t open = schema_text.find('(');
  if (open == std::string::npos) return parameters;
  int depth = 0;
  bool keyword_only = false;
  std::string current;
  const auto finish = [&] {
    const size_t start = current.find_first_not_of(' ');
    if (start == std::string::npos) return;
    const std::string text = current.substr(start);
    if (text == "*") {
      keyword_only = true;
      return;
    }
    const size_t equals = text.find('=');
    const std::string declaration = text.substr(0, equals);
    const size_t end = declaration.find_last_not_of(' ');
    const size_t space = declaration.find_last_of(' ', end);
    parameters.push_back({declaration.substr(space + 1, end - space), equals != std::string::npos, keyword_only});
  };
  for (size_t i = open + 1; i < schema_text.size(); ++i) {
    const char c = schema_text[i];
    if (depth == 0 && c == ')') break;
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && c == ',') {
      finish();
      current.clear();
    } else {
      current += c;
    }
  }
  finish();
  return parameters;
}

void check_against_schema(const OperatorSpec& spec, const std::string& schema_text) {
  const std::vector<SchemaParameter> parameters = schema_parameters(schema_text);
  std::string names;
  for (const SchemaParameter& parameter : parameters) names += (names.empty() ? "" : ", ") + parameter.name;
  size_t next = 0;       // the schema position after the last argument matched
  bool keywords = false;  // a keyword argument came before
  for (const ArgumentSpec& argument : spec.arguments) {
    size_t found = parameters.size();
    for (size_t p = 0; p < parameters.size(); ++p) {
      if (parameters[p].name == argument.name) found = p;
    }
    const Location& at = argument.where;
    if (found == parameters.size()) {
      throw DiagnosticError({at.file, at.line, at.column, "'" + argument.name + "' is not an argument of " + schema_text,
                             "one of: " + names});
    }
    if (found < next) {
      throw DiagnosticError({at.file, at.line, at.column, "'" + argument.name + "' is out of the schema's order",
                             "the arguments in the order of " + schema_text});
    }
    if (parameters[found].keyword_only && !argument.keyword) {
      throw DiagnosticError({at.file, at.line, at.column, "'" + argument.name + "' is keyword-only in " + schema_text,
                             "'" + argument.name + ": keyword ...'"});
    }
    if (!argument.keyword && (keywords || found != next)) {
      throw DiagnosticError({at.file, at.line, at.column,
                             "positional '" + argument.name + "' follows a skipped or keyword argument",
                             "the arguments before it specified, or '" + argument.name + ": keyword ...'"});
    }
    keywords = keywords || argument.keyword;
    for (size_t p = next; p < found; ++p) {
      if (!parameters[p].has_default) {
        throw DiagnosticError({at.file, at.line, at.column, "'" + parameters[p].name + "' has no default and is not specified",
                               "a line for every argument of " + schema_text + " without a default"});
      }
    }
    next = found + 1;
  }
  for (size_t p = next; p < parameters.size(); ++p) {
    if (!parameters[p].has_default) {
      throw DiagnosticError({spec.where.file, spec.where.line, spec.where.column,
                             "'" + parameters[p].name + "' has no default and is not specified",
                             "a line for every argument of " + schema_text + " without a default"});
    }
  }
}

}  // namespace backendbench::facto
