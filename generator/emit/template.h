// Code templates: real source files with ${name} placeholders (torchgen's CodeTemplate).
// A placeholder alone on its line takes a list, one item per line at that indentation; an
// inline placeholder takes a string (a list there is joined with ", "). A placeholder the
// caller does not supply, or a value the template never uses, is an error.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace backendbench::emit {

using TemplateValue = std::variant<std::string, std::vector<std::string>>;
using TemplateEnvironment = std::map<std::string, TemplateValue>;

class CodeTemplate {
 public:
  CodeTemplate(std::string text, std::string path);
  static CodeTemplate load(const std::string& path);

  // Throws DiagnosticError (path:line:col) for unknown placeholders or unused values.
  std::string render(const TemplateEnvironment& environment) const;
  const std::string& path() const { return path_; }

 private:
  std::string text_;
  std::string path_;
};

}  // namespace backendbench::emit
