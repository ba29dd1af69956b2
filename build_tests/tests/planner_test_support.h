// What the planner's and the command's unit tests share (planner_*_test.cpp, cli_*_test.cpp):
// a scratch folder, a verdict, a run as run.json describes it.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <fstream>
#include <string>

#include "backendbench/files.h"
#include "backendbench/verdict.h"

namespace backendbench::planner::test {

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

}  // namespace backendbench::planner::test
