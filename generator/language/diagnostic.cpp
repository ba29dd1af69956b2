// Formatting of diagnostics.
#include "language/diagnostic.h"

namespace backendbench {

std::string Diagnostic::str() const {
  std::string text = file;
  if (line > 0) {
    text += ":" + std::to_string(line);
    if (column > 0) text += ":" + std::to_string(column);
  }
  text += severity == Severity::kWarning ? ": warning: " : ": error: ";
  text += problem;
  if (!expected.empty()) text += "; expected " + expected;
  return text;
}

DiagnosticError::DiagnosticError(Diagnostic diagnostic)
    : std::runtime_error(diagnostic.str()), diagnostic_(std::move(diagnostic)) {}

}  // namespace backendbench
