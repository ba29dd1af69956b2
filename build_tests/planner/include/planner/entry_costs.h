// What a run's correctness entries will cost, learned from the runs before it. CTest orders its
// tests by their last times when a project gives no COST; `backendbench run` writes its own CTest
// folder each run, with entries whose split and packing change with the run, so it keeps what
// each operator's cases took (the verdicts' case_ms, written by the supervisors) itself, in the
// build tree, and plans the next run by it: the costliest entries start first, and where entries
// are cheap to start (served), an operator whose cases would hold one entry far longer than the
// others (TorchBench's convolutions on four GPUs: 10 parts of 9-11 s in a 19 s phase) is split
// finer and small jobs are packed by time instead of by count.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backendbench/verdict.h"

namespace backendbench::planner {

class CaseCosts {
 public:
  // The costs at `path`; none when it is missing or not such a file (a first run plans by counts).
  static CaseCosts read(const std::string& path);
  // Learns a run's correctness verdicts (those a process ran: case_ms of at least 0), replacing
  // what earlier runs said of the same (suite, operator, backend, device kind).
  void learn(const std::vector<Verdict>& verdicts);
  // Writes them to `path` whole (a temporary file renamed over it).
  void write(const std::string& path) const;
  // Milliseconds a case of `op` took on `backend`, `device_kind` "cpu" or "cuda"; nullopt: never run.
  std::optional<double> per_case(const std::string& suite, const std::string& op, const std::string& backend,
                                 const std::string& device_kind) const;
  bool empty() const { return known_.empty(); }

 private:
  struct Known {
    int64_t cases = 0, ms = 0;
  };
  std::map<std::string, Known> known_;  // "<suite>/<op>/<backend>/<device kind>"
};

// The device kind a verdict's device names: "cuda" for "cuda:1", else the text itself.
std::string device_kind(const std::string& device);

// The longest an entry should run, in milliseconds, when `total_ms` of cases run `at_once`
// entries at a time: a quarter of each one's share, so that the costliest-first order ends them
// all close together; never below a second, which holds a served entry's own cost under 5 %.
double longest_entry_ms(double total_ms, int at_once);

// How many parts a job of `cases` cases costing `estimated_ms` is split into for its correctness
// entries: `parts` (the build's split by count; 0 or 1: one) or more, so that none is over
// `longest_ms`; at most one part per case.
int parts_for(size_t cases, double estimated_ms, double longest_ms, int parts);

}  // namespace backendbench::planner
