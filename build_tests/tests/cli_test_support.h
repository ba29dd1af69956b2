// What the command's unit tests share (cli_*_test.cpp, build_service_test.cpp, scaffold_test.cpp):
// a scratch folder, a run's context in it, the diagnostic a run's arguments get, a verdict.
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

namespace backendbench::cli::test {

class Scratch {
 public:
  Scratch() : path_(files::temporary_directory() + "/backendbench_cli_test_" + std::to_string(getpid())) {
    files::remove_tree(path_);
    files::make_directories(path_);
  }
  ~Scratch() { files::remove_tree(path_); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    files::make_directories(file.substr(0, file.find_last_of('/')));
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

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

inline Verdict verdict_of(const std::string& case_name, bool passed, double speedup = 0, const char* frontend = "tests") {
  Verdict verdict;
  verdict.suite = "smoke";
  verdict.op = "relu.default";
  verdict.backend = "impl1";
  verdict.case_name = case_name;
  verdict.frontend = frontend;
  if (!passed) {
    verdict.status = Verdict::Status::kFailed;
    verdict.errors = {"relu.default case " + case_name + ": wrong values"};
  }
  if (speedup > 0) verdict.timing = TimingFigures{10, 10 / speedup, 10 / speedup, speedup};
  return verdict;
}

// A run as run.json describes it, started in /home/me/project.
inline const nlohmann::json kRunHere = {{"build_directory", "/home/me/project/build"},
                                        {"kernels_directory", "/home/me/project/my kernels"},
                                        {"working_directory", "/home/me/project"},
                                        {"device", "cpu"}};

}  // namespace backendbench::cli::test
