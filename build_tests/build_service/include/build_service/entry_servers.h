// The supervisors a run keeps for its correctness phase: test executables started with
// --backendbench_listen (the runtime's job_service.h: serve_entries), one per slot of each GPU (or
// per entry run at once on the CPU) for each test executable the phase runs, so that each
// correctness entry (backendbench-entry) hands its job to one that has started libtorch and
// CUDA already instead of starting them itself. A supervisor never loads kernel code; a
// request's kernels run in sandboxed workers as in any entry.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace backendbench::build {

class EntryServers {
 public:
  struct Executable {
    std::string path;  // a test executable the phase's entries run
    int per_gpu = 1;   // its servers on each GPU (on the CPU)
    bool spares = false;  // whether each keeps a spare worker for kernels under `kernel_root`
  };
  struct Plan {
    std::vector<Executable> executables;
    std::vector<std::string> gpus;  // the resource spec's GPU ids; empty: the CPU ("cpu")
    std::string kernel_root;        // where spare workers may load kernels from
    std::map<std::string, std::string> environment;  // set for every server (the entries' own)
    std::string log_path;                            // what the servers print outside requests
  };

  // Starts every server and waits (at most `ready_seconds`) until each listens or ends. An entry
  // that finds no free server that listens runs its executable itself.
  EntryServers(const Plan& plan, double ready_seconds = 120);
  ~EntryServers();  // close(), then waits for each to end (killing one still there after 5 s)
  // Closes every server's input: each ends by itself once its request (if any) is answered, with
  // its workers. Returns at once, so that the run goes on while they end (their CUDA's
  // teardown took 0.7 s of a 9 s phase on an H200).
  void close();
  EntryServers(const EntryServers&) = delete;
  EntryServers& operator=(const EntryServers&) = delete;

  // The prefix of the run's socket names (language/job.h: served_entry_address), for the entries'
  // command lines.
  const std::string& prefix() const { return prefix_; }
  int listening() const { return listening_; }
  int started() const { return static_cast<int>(servers_.size()); }

 private:
  struct Server {
    pid_t pid = -1;
    int to = -1, from = -1;
  };

  std::string prefix_;
  std::vector<Server> servers_;
  int listening_ = 0;
};

}  // namespace backendbench::build
