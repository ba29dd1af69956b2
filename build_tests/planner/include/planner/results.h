// Reporting a run: the results folder's staging, what run.json records of the host, and the
// scores printed at the end (and again by `backendbench report`).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backendbench/verdict.h"
#include "planner/build_tree.h"

namespace backendbench::planner {

// The versions and machine run.json records: torch, compilers, CUDA, the GPU, this checkout, the OS.
nlohmann::json versions(const BuildTree& tree);

// The local time in strftime's `format`.
std::string now_text(const char* format);

// Where this command was started: run.json keeps it, and the report shows paths relative to it.
std::string working_directory();

// The scores of `verdicts` (BackendBench's definitions), per operator, the skipped and failed
// tests and how to run a wrong kernel's first failed case again.
void print_scores(const std::vector<Verdict>& verdicts, const nlohmann::json& run);

// How the kept kernel of `op` did on the hold-out: every case of the run, the run's own salt.
nlohmann::json holdout_of(const std::vector<Verdict>& verdicts, const std::string& op);

// One line per operator of a generating backend's run: what was kept, how it did on the feedback
// cases and on the hold-out, and what it cost.
void print_generation(const nlohmann::json& generation);

// Google Benchmark's JSON outputs of the run's ./bench entries as one: the first's context, every
// output's benchmarks in entry order (an entry that wrote none, a crashed one, adds none).
std::string merged_benchmark_json(const std::vector<std::string>& outputs);

// The results folder as it is written: removed unless it was moved into place.
class StagingFolder {
 public:
  explicit StagingFolder(std::string path);
  ~StagingFolder();
  const std::string& path() const { return path_; }
  // Keeps the folder even when the run does not finish: it holds what a model was paid to write.
  void preserve() { preserved_ = true; }
  // Moves the folder to `destination`, replacing an earlier results folder there.
  void move_to(const std::string& destination);

 private:
  std::string path_;
  bool kept_ = false, preserved_ = false;
};

}  // namespace backendbench::planner
