// The one diagnostic format of the project: `file:line:col: error: what; expected what`
// (`warning:` for input that is accepted but probably not what was meant).
#pragma once

#include <stdexcept>
#include <string>

namespace backendbench {

struct Diagnostic {
  enum class Severity { kError, kWarning };
  std::string file;
  int line = 0;    // 0: the diagnostic is about the whole file or folder
  int column = 0;  // 0: the diagnostic is about the whole line
  std::string problem;
  std::string expected;  // may be empty
  Severity severity = Severity::kError;

  std::string str() const;
};

// Thrown by every stage for input it cannot accept; `what()` is the formatted diagnostic.
class DiagnosticError : public std::runtime_error {
 public:
  explicit DiagnosticError(Diagnostic diagnostic);
  const Diagnostic& diagnostic() const { return diagnostic_; }

 private:
  Diagnostic diagnostic_;
};

// A diagnostic about a whole file, folder or argument: "<where>: error: <what>; expected <form>".
inline DiagnosticError error_at(const std::string& where, const std::string& what, const std::string& expected) {
  return DiagnosticError(Diagnostic{where, 0, 0, what, expected});
}

}  // namespace backendbench
