// Configuring and building a run's build folder, with the build tool's progress shown, and
// finding the kernels that do not compile (each built alone).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "planner/build_tree.h"
#include "planner/tree_selection.h"

namespace backendbench::planner {

// Configures the build folder for the selection, only where it does not serve it already
// (tree_selection.h).
void configure_tree(const BuildTree& tree, const TreeSelection& selection, const std::string& log_directory);

// Builds `targets`, showing the build tool's "[done/total]" step count from its log as it grows.
// Throws DiagnosticError when the build fails (with `keep_going`, after building all it could).
void build_with_progress(const BuildTree& tree, const std::vector<std::string>& targets, int jobs, const std::string& log,
                         bool keep_going = false);

// Kernels whose library does not build (source → the first error line of its own build log,
// <logs>/<target>.log): each kernel target is built alone, so one kernel's error is its own.
// A library an earlier build left for such a kernel is removed.
std::map<std::string, std::string> broken_kernels(const BuildTree& tree, int jobs, const std::string& logs);

}  // namespace backendbench::planner
