// A build folder, as the backendbench command and the agents drive it: configured with the selection's BACKENDBENCH_*
// values (only when they differ from its cache), built for the targets the selection needs, and
// read back: each suite's suite.json (written by the generator) and each CTest entry's verdicts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace backendbench::planner {

// generated/<suite>/suite.json: the suite as data.
struct SuiteManifest {
  struct Case {
    std::string name, arguments, file;
    int line = 0;
    int64_t count = 0, input_elements = 0;
  };
  struct Backend {
    std::string name, kind, file, derived_from;  // kind: reference, kernel or op_library
    std::string language;                        // cpp, cuda or python
    bool cuda = false, expect_failure = false;
    // Whether its cases run on the CPU in a run on `run_device_cuda` or not: a compiled C++ kernel
    // always does (its binding takes CPU tensors), a CUDA kernel never, the others on the run's.
    bool runs_on_cpu(bool run_device_cuda) const {
      if (kind == "kernel" && language == "cpp") return true;
      return !cuda && !run_device_cuda;
    }
  };
  struct Operator {
    std::string op, folder, schema;
    std::vector<Case> cases;
    std::vector<Backend> backends;
  };
  std::string suite;
  std::vector<Operator> operators;
  int64_t excluded_inputs = 0, unselected_inputs = 0;
};
// Throws DiagnosticError naming the file when it is missing or not a suite manifest.
SuiteManifest read_suite_manifest(const std::string& path);

class BuildTree {
 public:
  BuildTree(std::string source_directory, std::string build_directory);

  const std::string& source() const { return source_; }
  const std::string& build() const { return build_; }
  bool configured() const;
  // A value of CMakeCache.txt; nullopt when absent.
  std::optional<std::string> cached(const std::string& name) const;

  // Configures when the tree is new or any of `values` differs from its cache. A new tree gets
  // `new_tree_values` too (generator, build type, where libraries are). Returns whether it ran;
  // throws DiagnosticError with the log's last lines when CMake fails.
  bool configure(const std::map<std::string, std::string>& values,
                 const std::map<std::string, std::string>& new_tree_values, const std::string& log_path) const;
  // Builds `targets`; throws DiagnosticError with the log's last lines when the build fails. `poll`, when
  // given, is called about twice a second while it runs. `keep_going`: past a step that fails, every
  // step that does not need it is still built (Ninja's -k 0, Make's -k).
  void build_targets(const std::vector<std::string>& targets, int jobs, const std::string& log_path,
                     const std::function<void()>& poll = nullptr, bool keep_going = false) const;

  // The kernel libraries' targets of this configuration (from its kernel manifest, so .cu kernels
  // of a build without CUDA are not among them), with the kernel source each builds.
  struct KernelTarget {
    std::string target, source, library;  // library: its manifest line, the file the build writes
  };
  std::vector<KernelTarget> kernel_targets() const;
  // Builds one target; false (its output in `log_path`) when it fails.
  bool build_target(const std::string& target, int jobs, const std::string& log_path) const;

  std::string suite_manifest_path(const std::string& suite) const;
  std::string results_directory() const;  // where the CTest entries write XML and verdicts
  std::string bench_executable() const;
  std::string test_executable(const std::string& suite) const;
  std::string entry_client() const;  // backendbench-entry, built with every test executable

 private:
  std::map<std::string, std::string> cache() const;  // CMakeCache.txt, read once per call

  std::string source_, build_;
};

}  // namespace backendbench::planner
