// What a run asks of its build folder: the BACKENDBENCH_* cache values of its selection (suites,
// operators, kernel folder, op libraries). A folder already configured for more than a run asks
// (every operator, or these and others) serves it as it is: runs that narrow or repeat a
// selection configure nothing, and one that widens it keeps what the folder had besides, so that
// switching back configures nothing either. Which cases and backends run is the run's own choice
// (its jobs), not the folder's.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/run_plan.h"

namespace backendbench::planner {

struct TreeSelection {
  std::vector<SuiteChoice> suites;
  std::string kernels_directory;
  std::vector<std::string> ops;
  int topn = 0;
  std::string torchbench_traces;
  std::vector<std::string> op_libraries;
  int candidate_slots = 0;  // the llm backends' (0: the tree's own)
  // When kernels_directory is a kernel view (links): the folder its links lead into, which the
  // kernels' sandboxed compiles may read. Links elsewhere lead nowhere there.
  std::string kernels_view_of;
};

// A value of the build folder's cache; nullopt when it has none (a new folder).
using CachedValue = std::function<std::optional<std::string>(const std::string& name)>;

// The values to configure the folder with for `selection`, given what it has: list values
// (suites, suite files, operators, op libraries) keep the folder's when they cover the
// selection's and are joined with them otherwise; the rest are the selection's.
std::map<std::string, std::string> tree_values(const TreeSelection& selection, const CachedValue& cached);

// Whether operator filter `broad` selects every operator `narrow` does: the same filter, a base
// name and one of its overloads (relu covers relu.default and aten.relu.default), or the same
// overload spelled two ways.
bool filter_covers(const std::string& broad, const std::string& narrow);

}  // namespace backendbench::planner
