// Unit tests of which build folder serves a selection: planner/tree_selection.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "backendbench/files.h"
#include "planner/results_folder.h"
#include "planner/tree_selection.h"
#include "planner/build_tree.h"
#include "planner_test_support.h"

namespace backendbench::planner {
namespace {

using namespace test;

TEST(TreeSelection, FiltersCoverTheirOverloads) {
  EXPECT_TRUE(filter_covers("relu", "relu"));
  EXPECT_TRUE(filter_covers("relu", "relu.default"));
  EXPECT_TRUE(filter_covers("add", "add.Tensor"));
  EXPECT_TRUE(filter_covers("add", "aten.add.Scalar"));
  EXPECT_TRUE(filter_covers("add.Tensor", "aten.add.Tensor"));
  EXPECT_FALSE(filter_covers("add.Tensor", "add")) << "one overload does not cover the base name's others";
  EXPECT_FALSE(filter_covers("add.Tensor", "add.Scalar"));
  EXPECT_FALSE(filter_covers("relu", "leaky_relu"));
  EXPECT_FALSE(filter_covers("relu.default", "relu_.default"));
}

// A build folder's cache as a map (nullopt for a name it lacks).
CachedValue cache_of(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

TEST(TreeSelection, ANewFolderGetsTheSelectionAsItIs) {
  TreeSelection selection;
  selection.suites = {{"smoke", "", true}, {"edge", "", false}};
  selection.kernels_directory = "/k";
  selection.ops = {"relu", "add.Tensor"};
  const auto values = tree_values(selection, cache_of({}));
  EXPECT_EQ(values.at("BACKENDBENCH_SUITES"), "smoke;edge");
  EXPECT_EQ(values.at("BACKENDBENCH_OPS"), "relu,add.Tensor");
  EXPECT_EQ(values.at("BACKENDBENCH_KERNELS_DIR"), "/k");
  EXPECT_EQ(values.at("BACKENDBENCH_TOPN"), "0");
  EXPECT_EQ(values.count("BACKENDBENCH_CANDIDATE_SLOTS"), 0u);
}

TEST(TreeSelection, AFolderThatServesTheSelectionKeepsItsValues) {
  const std::map<std::string, std::string> folder = {{"BACKENDBENCH_SUITES", "smoke;edge"}, {"BACKENDBENCH_SUITE_FILES", ""},
                                                     {"BACKENDBENCH_OPS", "relu,add"}, {"BACKENDBENCH_OP_LIBRARIES", ""},
                                                     {"BACKENDBENCH_KERNELS_DIR", "/k"}, {"BACKENDBENCH_TOPN", "0"}};
  TreeSelection narrower;
  narrower.suites = {{"edge", "", false}};
  narrower.kernels_directory = "/k";
  narrower.ops = {"relu.default"};
  auto values = tree_values(narrower, cache_of(folder));
  for (const char* name : {"BACKENDBENCH_SUITES", "BACKENDBENCH_OPS", "BACKENDBENCH_KERNELS_DIR", "BACKENDBENCH_TOPN"}) {
    EXPECT_EQ(values.at(name), folder.at(name)) << name << ": nothing to configure";
  }
  // Wider: what the folder had, and the rest; switching back is then narrower again.
  TreeSelection wider = narrower;
  wider.suites = {{"smoke", "", true}, {"opinfo", "", false}};
  wider.ops = {"mul", "add.Tensor"};
  values = tree_values(wider, cache_of(folder));
  EXPECT_EQ(values.at("BACKENDBENCH_SUITES"), "smoke;edge;opinfo");
  EXPECT_EQ(values.at("BACKENDBENCH_OPS"), "relu,add,mul");
  // Every operator, on either side, is every operator.
  TreeSelection all = narrower;
  all.ops = {};
  EXPECT_EQ(tree_values(all, cache_of(folder)).at("BACKENDBENCH_OPS"), "");
  auto every = folder;
  every["BACKENDBENCH_OPS"] = "";
  EXPECT_EQ(tree_values(narrower, cache_of(every)).at("BACKENDBENCH_OPS"), "");
  // What selects cases or builds kernels is the selection's own.
  TreeSelection other = narrower;
  other.kernels_directory = "/other";
  other.topn = 5;
  values = tree_values(other, cache_of(folder));
  EXPECT_EQ(values.at("BACKENDBENCH_KERNELS_DIR"), "/other");
  EXPECT_EQ(values.at("BACKENDBENCH_TOPN"), "5");
}

TEST(TreeSelection, SuiteFilesAreKeptWhileTheirFilesExist) {
  Scratch scratch;
  const std::string kept = scratch.write("mine.txt", "Operator: aten.relu.default\n");
  const std::string gone = scratch.path() + "/deleted.txt";
  const std::string other = scratch.write("mine2.txt", "Operator: aten.relu.default\n");
  const auto folder = cache_of({{"BACKENDBENCH_SUITE_FILES", "mine=" + kept + ";old=" + gone}});
  TreeSelection selection;
  selection.suites = {{"smoke", "", true}};
  EXPECT_EQ(tree_values(selection, folder).at("BACKENDBENCH_SUITE_FILES"), "mine=" + kept);
  selection.suites = {{"mine", other, true}};
  EXPECT_EQ(tree_values(selection, folder).at("BACKENDBENCH_SUITE_FILES"), "mine=" + other)
      << "a suite named again with another file replaces it";
}

TEST(TreeSelection, CandidateSlotsOnlyGrow) {
  TreeSelection selection;
  selection.candidate_slots = 4;
  EXPECT_EQ(tree_values(selection, cache_of({})).at("BACKENDBENCH_CANDIDATE_SLOTS"), "8");
  EXPECT_EQ(tree_values(selection, cache_of({{"BACKENDBENCH_CANDIDATE_SLOTS", "16"}})).at("BACKENDBENCH_CANDIDATE_SLOTS"), "16");
  selection.candidate_slots = 12;
  EXPECT_EQ(tree_values(selection, cache_of({{"BACKENDBENCH_CANDIDATE_SLOTS", "8"}})).at("BACKENDBENCH_CANDIDATE_SLOTS"), "12");
}

}  // namespace
}  // namespace backendbench::planner
