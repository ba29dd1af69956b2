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

namespace backendbench::planner {

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
    // With both: each server on a GPU runs in bubblewrap (a mount namespace, nothing else
    // unshared) whose /dev holds that GPU's device file alone, from `gpu_files` (one per entry
    // of `gpus`; gpu_files.h), so that its CUDA start opens one GPU, not all of the host's.
    std::vector<std::string> gpu_files;
    std::string bubblewrap;
  };

  // Starts every server, without waiting for them: a run starts them before its build, which
  // they then overlap (libtorch's start, a spare worker's), and waits (wait_until_listening) once
  // its entries are planned. An entry that finds no free server that listens runs its executable
  // itself.
  explicit EntryServers(const Plan& plan);
  ~EntryServers();  // close(), then waits for each to end (killing one still there after 5 s)
  // Whether the servers started can serve `plan`, given the servers it adds (extend): the same
  // GPUs, kernel root and environment; for each of its executables, servers with spare workers
  // where it wants them, every one still running an executable that the build left as it was
  // when the server started.
  bool covers(const Plan& plan) const;
  // Starts the servers `plan` has more of than were started (covers(plan) must hold).
  void extend(const Plan& plan);
  // Waits (at most `ready_seconds`) until each server started listens or ends; the count that
  // listen.
  int wait_until_listening(double ready_seconds = 120);
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
    std::string executable, gpu, stamp;  // stamp: the executable's file when it started
    bool spares = false;
    bool answered = false;  // it said it listens, or ended, or its wait timed out
    std::string output;     // its first line, as it arrives
  };
  void start(const Executable& served, const std::string& gpu, int slot);

  Plan plan_;  // as first started: the GPUs, kernel root, environment and log of every server
  std::string prefix_;
  std::vector<Server> servers_;
  int listening_ = 0;
};

}  // namespace backendbench::planner
