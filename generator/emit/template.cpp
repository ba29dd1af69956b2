// Template rendering; see template.h.
#include "emit/template.h"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "language/diagnostic.h"

namespace backendbench::emit {
namespace {

std::string indent_lines(const std::string& text, const std::string& indent) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    out += (line.empty() ? "" : indent) + line;
    if (end == std::string::npos) break;
    out += "\n";
    start = end + 1;
  }
  return out;
}

std::string known_names(const TemplateEnvironment& environment) {
  std::string names;
  for (const auto& [name, unused] : environment) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "no placeholders" : "one of " + names;
}

}  // namespace

CodeTemplate::CodeTemplate(std::string text, std::string path) : text_(std::move(text)), path_(std::move(path)) {}

CodeTemplate CodeTemplate::load(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw DiagnosticError({path, 0, 0, "cannot read the template", "a readable file in templates/"});
  std::ostringstream buffer;
  buffer << stream.rdbuf();
  return CodeTemplate(buffer.str(), path);
}

std::string CodeTemplate::render(const TemplateEnvironment& environment) const {
  std::set<std::string> used;
  std::string out;
  int line = 1;
  size_t line_start = 0;
  size_t pos = 0;
  while (pos < text_.size()) {
    const char c = text_[pos];
    if (c != '$' || pos + 1 >= text_.size() || text_[pos + 1] != '{') {
      out += c;
      if (c == '\n') {
        ++line;
        line_start = pos + 1;
      }
      ++pos;
      continue;
    }
    const int column = static_cast<int>(pos - line_start) + 1;
    const size_t close = text_.find('}', pos);
    const std::string name = close == std::string::npos ? "" : text_.substr(pos + 2, close - pos - 2);
    bool valid = !name.empty();
    for (char n : name) valid = valid && (std::isalnum(static_cast<unsigned char>(n)) || n == '_');
    if (!valid) throw DiagnosticError({path_, line, column, "malformed placeholder", "${name} with a name of [A-Za-z0-9_]"});
    auto found = environment.find(name);
    if (found == environment.end()) {
      throw DiagnosticError({path_, line, column, "unknown placeholder '" + name + "'", known_names(environment)});
    }
    used.insert(name);
    const std::string before = text_.substr(line_start, pos - line_start);
    const size_t line_end = text_.find('\n', close);
    const std::string after = text_.substr(close + 1, line_end == std::string::npos ? std::string::npos : line_end - close - 1);
    const bool alone_on_line = before.find_first_not_of(" \t") == std::string::npos && after.find_first_not_of(" \t") == std::string::npos;
    if (const auto* items = std::get_if<std::vector<std::string>>(&found->second)) {
      if (alone_on_line) {
        out.erase(out.size() - before.size());  // the indentation is re-applied per item
        std::string block;
        for (const std::string& item : *items) block += indent_lines(item, before) + "\n";
        out += block;
        // drop the rest of this line, including its newline: each item brought its own
        pos = line_end == std::string::npos ? text_.size() : line_end + 1;
        ++line;
        line_start = pos;
        continue;
      }
      std::string joined;
      for (const std::string& item : *items) joined += (joined.empty() ? "" : ", ") + item;
      out += joined;
    } else {
      out += std::get<std::string>(found->second);
    }
    pos = close + 1;
  }
  for (const auto& [name, unused] : environment) {
    if (!used.count(name)) {
      throw DiagnosticError({path_, 0, 0, "value '" + name + "' is not used by the template",
                             "a ${" + name + "} placeholder, or no such value"});
    }
  }
  return out;
}

}  // namespace backendbench::emit
