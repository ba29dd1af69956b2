// What the command's unit tests share (cli_*_test.cpp, scaffold_test.cpp): the planner's tests'
// (a scratch folder, a verdict), a run's context in the folder, the diagnostic a run's arguments get.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <string>

#include "backendbench/files.h"
#include "backendbench/verdict.h"
#include "cli/errors.h"
#include "cli/run_request.h"
#include "planner_test_support.h"

namespace backendbench::cli::test {

using planner::test::Scratch;
using planner::test::verdict_of;
using planner::test::kRunHere;

inline RunContext context_in(const Scratch& scratch) {
  RunContext context;
  context.source_directory = BACKENDBENCH_TEST_SOURCE_DIR;
  context.default_build_directory = scratch.path() + "/build";
  context.default_jobs = 2;
  context.now_stamp = "20261124_120000";
  return context;
}

inline bool known(const std::string& filter) { return filter == "relu" || filter == "add.Tensor" || filter == "add"; }

// The message check_run_arguments throws for `arguments`, "" when it accepts them.
inline std::string error_of(const RunArguments& arguments, const Scratch& scratch) {
  try {
    check_run_arguments(arguments, context_in(scratch), known);
  } catch (const DiagnosticError& error) {
    return error.what();
  }
  return "";
}

inline RunArguments with(std::function<void(RunArguments&)> change) {
  RunArguments arguments;
  change(arguments);
  return arguments;
}

}  // namespace backendbench::cli::test
