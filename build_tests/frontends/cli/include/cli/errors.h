// The backendbench command's one error: a located message in the project's diagnostic form,
// "<where>: error: <what was wrong>; expected <the accepted form>", printed as it is.
#pragma once

#include <string>

#include "language/diagnostic.h"

namespace backendbench::cli {

// The rooms below the command (the agents, the planner) throw DiagnosticError (error_at); the
// command catches that, which catches this too.
class CliError : public DiagnosticError {
 public:
  CliError(const std::string& where, const std::string& what, const std::string& expected)
      : DiagnosticError(Diagnostic{where, 0, 0, what, expected}) {}
};

}  // namespace backendbench::cli
