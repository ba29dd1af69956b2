// Small jobs run together: `backendbench run` gives its correctness phase fewer, fuller CTest
// entries by running several small jobs of a suite in one process (a pack). Every process
// starts libtorch, and on a GPU CUDA, whose start the host serialises: 227 entries of the full
// TorchBench aten run on four H200s spent 9/10 of their time starting (README: several GPUs).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace backendbench::planner {

// One job (an entry, or a part of a split one) as packing sees it.
struct PackUnit {
  std::string suite;  // the test executable that runs it
  size_t size = 0;    // its cases; or, packing by time (entry_costs.h), its estimated milliseconds
  // Never packed: a part of an operator split for its size (heavy already), or a job that runs
  // untrusted code (a kernel or an op library), whose hang would time out the whole pack's entry
  // and fail the other jobs' cases with it. Packs hold the aten reference's jobs.
  bool alone = false;
};

// The most cases in one pack: an even share of the run's cases over the entries run at once, so
// the run keeps its parallelism, and at most `cases_per_entry` (the run's split size; 0: 200),
// which bounds how long an entry runs on a CPU. On GPUs packs may hold 8 times that: there a
// process's start (CUDA's, serialised by the host) costs seconds and a case milliseconds.
size_t pack_limit(size_t total_cases, int cases_per_entry, int at_once, bool on_gpus);

// Packs of the units of one suite, in order, each of at most `limit` (cases, or milliseconds); a unit `alone`, or
// one of more than `limit`, is a pack of its own and does not close the pack being filled. Each unit is
// in exactly one pack. (Packing
// by case count alone put TorchBench's convolution parts, 50 ms a case on an H200 against under
// 1 ms for most operators, into one pack of a minute.)
std::vector<std::vector<size_t>> pack_units(const std::vector<PackUnit>& units, size_t limit);

}  // namespace backendbench::planner
