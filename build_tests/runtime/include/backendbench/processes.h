// Processes as the supervisor sees them from outside, in /proc: a worker's whole tree (bubblewrap,
// the worker, every thread and child a kernel started), the CPU time they and the machine spent,
// and stopping a tree while something else is timed. Linux only; nothing here runs beside a
// kernel, and nothing a kernel's process says is read (only the kernel's own view of /proc).
#pragma once

#include <sys/types.h>

#include <vector>

namespace backendbench::processes {

// `root` and every process below it (/proc/<pid>/task/<tid>/children, each thread's), `root`
// first; empty when `root` has ended. Inside bubblewrap's PID namespace an orphaned process is
// adopted by the namespace's first process, so a sandboxed kernel's children never leave the tree.
std::vector<pid_t> tree_of(pid_t root);

// CPU seconds (user and system, every thread; user alone where `user_only`) the processes of
// `pids` have spent so far; an ended one counts nothing.
double cpu_seconds_of(const std::vector<pid_t>& pids, bool user_only = false);

// CPU seconds every core of the machine has spent since boot (/proc/stat, in clock ticks): busy
// (user, nice, system, interrupts, stolen by the hypervisor), in all, and in processes' own code
// or stolen (user, nice, steal: what the kernel's own threads, which a process can set to work by
// its system calls and memory pressure, do not add to).
struct MachineTime {
  double busy = 0, all = 0, user = 0;
};
MachineTime machine_time();

// Microseconds some task of the machine has waited for a core since boot (pressure stall
// information, /proc/pressure/cpu "some total"); -1 where the kernel has none.
double cpu_stall_microseconds();

// How busy the machine was while something ran, from construction to a reading:
//   other_cores(): the cores' worth of time other processes than `own` (trees of processes this
//     process watches; itself always counted as its own) took in their own code, or the
//     hypervisor took, on average (0: the cores were the measurement's alone; 1: one whole core
//     went to something else). Not the system's own threads' time, which `own` can make (a kernel
//     that fills memory sets the page reclaimer to work). /proc/stat counts in clock ticks, so
//     over less than kShortestLoadSeconds it says nothing: -1.
//   waited_share(): the share of the time some task, its own included, was ready to run and
//     waited for a core (pressure stall information, to the microsecond); -1 without it.
class LoadMeter {
 public:
  static constexpr double kShortestLoadSeconds = 0.2;
  explicit LoadMeter(std::vector<pid_t> own_roots);
  double other_cores() const;
  double waited_share() const;

 private:
  double seconds_since_start() const;
  std::vector<pid_t> roots_;
  MachineTime machine_;
  double own_seconds_ = 0;
  double stalled_us_ = -1;
  double started_ = 0;
};

// Every process of the trees of `roots`, stopped (SIGSTOP, which no process can catch or ignore)
// until this ends (SIGCONT), with the children they start while being stopped. A kernel's
// load-time threads then take no core from another kernel's timing or from the supervisor's.
class Stopped {
 public:
  explicit Stopped(const std::vector<pid_t>& roots);
  ~Stopped();
  Stopped(const Stopped&) = delete;
  Stopped& operator=(const Stopped&) = delete;
  Stopped(Stopped&& other) noexcept;
  const std::vector<pid_t>& pids() const { return stopped_; }
  // Whether every process of the trees is stopped now, each of its threads, waiting up to
  // `wait_ms` for those still finishing a system call: none can read or write anything until
  // this ends (a kernel forking without end is not, nor one a debugger holds).
  bool whole(int wait_ms = 200) const;

 private:
  std::vector<pid_t> roots_;
  std::vector<pid_t> stopped_;
};

// The state letter of /proc/<pid>/stat ('R', 'S', 'T' for stopped, ...); '\0' when it has ended.
char state_of(pid_t pid);

}  // namespace backendbench::processes
