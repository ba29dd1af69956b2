// Unit tests of small jobs packed into entries: planner/entry_packs.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "planner/entry_packs.h"
#include "planner_test_support.h"

namespace backendbench::planner {
namespace {

using namespace test;

TEST(EntryPacks, SmallJobsOfASuiteShareAnEntryUpToTheLimit) {
  const std::vector<PackUnit> units = {{"torchbench", 120}, {"torchbench", 50}, {"torchbench", 40}, {"torchbench", 300},
                                       {"torchbench", 10},  {"smoke", 5},       {"smoke", 5}};
  const std::vector<std::vector<size_t>> packs = pack_units(units, 200);
  // 120 and 50 fit in 200, 40 more would not; the unit of 300 closes the pack of 40
  ASSERT_EQ(packs.size(), 5u);
  EXPECT_EQ(packs[0], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(packs[1], (std::vector<size_t>{2}));
  EXPECT_EQ(packs[2], (std::vector<size_t>{3}));  // more than the limit: alone
  EXPECT_EQ(packs[3], (std::vector<size_t>{4}));  // another suite's unit never joins it
  EXPECT_EQ(packs[4], (std::vector<size_t>{5, 6}));
  std::vector<int> seen(units.size());
  for (const auto& pack : packs) {
    for (const size_t unit : pack) ++seen[unit];
  }
  EXPECT_EQ(seen, std::vector<int>(units.size(), 1));  // every unit exactly once
  EXPECT_EQ(pack_units(units, 1).size(), units.size());  // a limit of 1: nothing packed
  // Parts of a split operator stay alone, however small, and the small units around them still share a pack.
  const std::vector<std::vector<size_t>> with_parts =
      pack_units({{"torchbench", 10}, {"torchbench", 20, true}, {"torchbench", 20, true}, {"torchbench", 10}}, 200);
  ASSERT_EQ(with_parts.size(), 3u);
  EXPECT_EQ(with_parts[0], (std::vector<size_t>{0, 3}));
  EXPECT_EQ(with_parts[1], (std::vector<size_t>{1}));
  EXPECT_EQ(with_parts[2], (std::vector<size_t>{2}));
}

TEST(EntryPacks, TheLimitKeepsTheRunsParallelism) {
  EXPECT_EQ(pack_limit(17546, 200, 16, false), 200u);  // the split size, on the CPU
  EXPECT_EQ(pack_limit(17546, 0, 16, false), 200u);    // 0 (never split): 200
  EXPECT_EQ(pack_limit(17546, 200, 16, true), 1097u);  // on GPUs: the run's share per entry at once...
  EXPECT_EQ(pack_limit(17546, 200, 4, true), 1600u);   // ... up to 8 times the split size
  EXPECT_EQ(pack_limit(60, 200, 2, false), 30u);       // a small run: at least as many entries as run at once
  EXPECT_EQ(pack_limit(61, 200, 2, true), 31u);
  EXPECT_EQ(pack_limit(0, 200, 4, false), 1u);
  EXPECT_EQ(pack_limit(100, 1000, 0, false), 100u);  // no parallelism given: one at once
}

}  // namespace
}  // namespace backendbench::planner
