// The backendbench command's one error: a located message in the project's diagnostic form,
// "<where>: error: <what was wrong>; expected <the accepted form>", printed as it is.
#pragma once

#include <stdexcept>
#include <string>

namespace backendbench::cli {

class CliError : public std::runtime_error {
 public:
  CliError(const std::string& where, const std::string& what, const std::string& expected)
      : std::runtime_error(where + ": error: " + what + "; expected " + expected) {}
};

}  // namespace backendbench::cli
