// Configuring and building a run's build folder (build_steps.h).
#include "planner/build_steps.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>

#include "backendbench/files.h"
#include "language/diagnostic.h"
#include "planner/installation.h"
#include "planner/process.h"
#include "planner/progress.h"

namespace backendbench::planner {

using Clock = std::chrono::steady_clock;

void configure_tree(const BuildTree& tree, const TreeSelection& selection, const std::string& log_directory) {
  const BuildTree own(installation().source_directory, installation().build_directory);
  const std::map<std::string, std::string> values =
      tree_values(selection, [&](const std::string& name) { return tree.cached(name); });
  std::map<std::string, std::string> new_tree = {{"CMAKE_BUILD_TYPE", "Release"}, {"BACKENDBENCH_BUILD_TESTS", "OFF"}};
  // Only a new tree takes these; an existing one keeps its own.
  if (!tree.configured()) {
    for (const char* name : {"CMAKE_GENERATOR", "CMAKE_PREFIX_PATH", "CMAKE_INCLUDE_PATH", "BACKENDBENCH_CUDA",
                             "CMAKE_CUDA_ARCHITECTURES", "Python3_EXECUTABLE"}) {
      if (const auto value = own.cached(name); value && !value->empty()) new_tree[name] = *value;
    }
  }
  files::make_directories(log_directory);
  std::cout << (tree.configured() ? "configuring " : "configuring a new build folder ") << tree.build() << " (log: "
            << log_directory << "/configure.log)\n" << std::flush;
  if (!tree.configure(values, new_tree, log_directory + "/configure.log")) std::cout << "  unchanged\n";
}

void build_with_progress(const BuildTree& tree, const std::vector<std::string>& targets, int jobs, const std::string& log,
                         bool keep_going) {
  files::remove_tree(log);
  ProgressPrinter printer;
  const auto start = Clock::now();
  std::string steps;
  auto show = [&](bool final) {
    const std::string tail = tail_of_file(log, 1);
    if (tail.size() > 2 && tail[0] == '[' && tail.find('/') < tail.find(']')) steps = tail.substr(1, tail.find(']') - 1);
    printer.show("build  " + (steps.empty() ? std::string("starting") : steps + " steps") + "  " +
                     clock_text(seconds_since(start)) + " elapsed",
                 final);
  };
  try {
    tree.build_targets(targets, jobs, log, [&] { show(false); }, keep_going);
  } catch (const DiagnosticError&) {
    show(true);
    throw;
  }
  show(true);
}


// Kernels whose library does not build, each with the first error line of its own build log
// (<logs>/<target>.log): each kernel target is built alone, so one kernel's error is its own.
std::map<std::string, std::string> broken_kernels(const BuildTree& tree, int jobs, const std::string& logs) {
  std::map<std::string, std::string> broken;
  for (const BuildTree::KernelTarget& kernel : tree.kernel_targets()) {
    const std::string log = logs + "/" + kernel.target + ".log";
    files::remove_tree(log);
    if (tree.build_target(kernel.target, jobs, log)) continue;
    // What an earlier build of it (or of a kernel of the same name in another folder) left: no
    // process may load it in this run's place.
    files::remove_tree(kernel.library);
    std::string first = "see " + log;
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (line.find("error") != std::string::npos) {
        first = line;
        break;
      }
    }
    broken[kernel.source] = first;
  }
  return broken;
}

}  // namespace backendbench::planner
