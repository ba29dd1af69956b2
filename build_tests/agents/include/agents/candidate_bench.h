// One candidate kernel of the llm backends, built alone and checked: the file is written in the
// generated_kernels/ layout under its attempt's folder, its binding generated in-process (the
// generator's emit stage), compiled in a candidate slot of the build folder (the kernels' flags
// and precompiled header; slots compile in parallel, nothing is configured), and checked by the
// suites' own test executables, which load only it (BACKENDBENCH_KERNEL_MANIFEST) and run only the
// feedback cases, with the feedback salt. Everything it writes is under the attempt's folder:
// the kernel, its binding, build.log, the library, manifest.txt, <suite>.verdicts.jsonl, and for a
// correct candidate of a best-of-N run, bench.verdicts.jsonl: a served ./bench's timing of its
// timed feedback cases.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backendbench/verdict.h"
#include "planner/build_tree.h"
#include "planner/job_server.h"
#include "agents/kernel_prompt.h"

namespace backendbench::agents {

using planner::BuildTree;

// The cases of one suite a candidate is checked on (gtest case names).
struct SuiteCases {
  std::string suite;
  std::vector<std::string> cases;
};

struct CandidateResult {
  enum class Stage { kNoCode, kBuildFailed, kChecked };
  Stage stage = Stage::kNoCode;
  std::string kernel_file;                 // absolute; "" for no code
  std::vector<std::string> build_errors;   // the compiler's first error lines (build failed)
  std::vector<Verdict> verdicts;           // one per feedback case (a case whose process died: a failure)
  int passed = 0, failed = 0, skipped = 0;
  double build_seconds = 0, check_seconds = 0;
  // Timed (best-of-N only, a correct candidate, timed suites): the geomean speedup over ATen of its
  // feedback cases in the timed suites, from a served ./bench; nullopt when not timed.
  std::optional<double> speedup;
  int timed_cases = 0;
  double time_seconds = 0;

  bool correct() const { return stage == Stage::kChecked && failed == 0 && passed > 0; }
  int cases() const { return passed + failed + skipped; }
};

struct CandidateBenchOptions {
  BuildTree tree;
  int slots = 1;
  KernelLanguage language = KernelLanguage::kCpp;
  std::string device;  // "" cpu/cuda as the executables decide
  int case_timeout_seconds = 60;
  std::string templates_directory;
  uint64_t salt = 0;  // the feedback draws' salt
  std::set<std::string> timed_suites;  // a correct candidate is timed on these suites' cases ("": never)
  // Builds run in bubblewrap (sandbox.h: the allowlisted environment, no network, writable only
  // the slot's outputs) and checks in sandboxed kernel workers; false only with --no-sandbox.
  bool sandbox = true;
  // The folder under which every attempt's folder lies (absolute): the suites' test executables
  // serve the checks (job_server.h), kept between candidates, and their spare kernel workers see
  // it read-only.
  std::string attempts_root;
  // The suites whose test executables will check candidates: where spares are replaced at once
  // (8 cores or more), prepare() starts `slots` served executables of each ahead, so that the
  // first candidates' checks do not wait for libtorch and CUDA to start in them.
  std::vector<std::string> checked_suites;
};

class CandidateBench {
 public:
  explicit CandidateBench(CandidateBenchOptions options);

  // Starts the served executables ahead (the timing one; on many cores the checking ones), builds
  // the slots once (and the precompiled header they reuse), then reads each slot's compile and
  // link commands from the build tool. Throws DiagnosticError with the log's last lines on failure.
  void prepare(const std::string& log_path);

  // Writes `code` as <attempt>/kernel/<folder>/<folder>_implementation_<number><ext> (and each of
  // `beside`, a path relative to <attempt>/kernel → its text: headers the kernel includes), builds
  // it in `slot` (< slots), and runs `cases`. Thread-safe for distinct slots.
  CandidateResult check(int slot, const std::string& attempt_directory, const std::string& folder, int number,
                        const std::string& code, const std::vector<SuiteCases>& cases,
                        const std::map<std::string, std::string>& beside = {}) const;

  const CandidateBenchOptions& options() const { return options_; }

 private:
  struct SlotCommands {
    // source: the slot's C++ source (slot_<k>.cpp; for CUDA its host part, slot_<k>.host.cpp);
    // binding_source: its binding (slot_<k>.binding.cpp, slot_<k>.host.binding.cpp);
    // cuda_source: a CUDA slot's slot_<k>.cu ("" for C++).
    std::string source, binding_source, cuda_source, library;
    std::vector<std::string> commands;  // shell commands, run in the build folder
    int binding_command = -1;           // the one of `commands` that compiles binding_source
    std::string binding_object;         // what it writes: as its command names it, and absolute
    std::string binding_object_path;
    std::string language;               // cpp or cu: the flags its binding is compiled with
  };
  // What the candidate's generated files are: `own_part` (C++: the kernel, for a two-part .cu
  // its host part; for a classic .cu kernel its whole binding, CUDA), `binding` (C++, "" for a
  // classic .cu) and `device_part` (a two-part .cu kernel's; "" otherwise).
  struct CandidateFiles {
    std::string own_part, binding, device_part;
  };
  // Builds `files` in `slot`. The binding's compile is left out when an object compiled from the
  // same text with the same flags is kept (<build>/candidate_slots/bindings): the link takes it.
  bool build_in_slot(int slot, const std::string& attempt, const CandidateFiles& files, const std::string& log_path) const;
  void time(const std::string& attempt, const std::string& op, const std::string& backend, const std::vector<SuiteCases>& cases,
            CandidateResult& result) const;

  // A served test executable of `suite`, idle; started when none is. For Python candidates where
  // spares are replaced at once (kernel_workers.h: replaces_spare_at_once; 8 cores or more by default),
  // one more is started ahead whenever none is left idle, and the one idle longest is taken: at
  // concurrency 1 two serve in turn, and each one's spare has two candidates' intervals to start
  // (a Triton spare takes about 6 s, more than one interval of a training run's 5 s).
  std::unique_ptr<planner::JobServer> take_server(const std::string& suite) const;
  std::unique_ptr<planner::JobServer> new_server(const std::string& suite) const;
  void give_back(const std::string& suite, std::unique_ptr<planner::JobServer> server) const;
  // A served ./bench that times candidates.
  std::unique_ptr<planner::JobServer> new_timing_server() const;
  // `executable` serving this bench's jobs (--backendbench_serve), its first spare ready for this
  // bench's language; what it prints outside a request goes to `log`.
  std::unique_ptr<planner::JobServer> served(const std::string& executable, const std::string& log) const;

  CandidateBenchOptions options_;
  std::vector<SlotCommands> slots_;
  mutable std::mutex servers_mutex_;
  mutable std::map<std::string, std::vector<std::unique_ptr<planner::JobServer>>> idle_servers_;
  mutable int servers_started_ = 0;
  bool many_cores_ = false;  // spare_policy.h: replaces_spare_at_once_here
  // One candidate timed at a time: two timings on one GPU (or one machine's cores) would each
  // measure the other's load. They are served by one ./bench (--backendbench_serve), kept between
  // candidates and started ahead by prepare(): a timing then costs its cases, not the start of
  // libtorch and CUDA in ./bench and in its kernel worker.
  mutable std::mutex timing_mutex_;
  mutable std::unique_ptr<planner::JobServer> timing_server_;
};

}  // namespace backendbench::agents
