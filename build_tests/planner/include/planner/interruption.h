// A run stopped from outside (Ctrl-C, SIGTERM from a scheduler or timeout(1), SIGHUP when the
// terminal goes): the run stops the process it is waiting for, keeps every verdict written so far,
// writes its results folder and exits 130, its cases that never ran skipped, not failed. A second
// signal ends it at once (the process it waits for killed first).
//
// While an InterruptWatch lives, run_process starts each child in a process group of its own
// (so that CTest's tests, which CTest leaves running when it is interrupted itself, end with it)
// and stops that group when the run is interrupted.
#pragma once

#include <sys/types.h>

#include <string>

namespace backendbench::planner {

// The exit status of an interrupted run (128 + SIGINT, as a shell reports Ctrl-C).
constexpr int kInterruptedStatus = 130;

// Catches SIGINT, SIGTERM and SIGHUP for its lifetime and puts the signal handling back as it
// found it when it ends. One at a time.
class InterruptWatch {
 public:
  InterruptWatch();
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;
};

// The signal that interrupted the run (0: none, or no watch).
int interrupting_signal();
// "SIGINT", "SIGTERM", "SIGHUP" (or "signal N").
std::string signal_name(int signal_number);
// The skip reason of a case that had no verdict when the run was stopped by `signal_number`.
std::string not_run_reason(int signal_number);

// For run_process: whether a watch is on (children in their own process groups), and the group of
// the child it waits for now (0: none), which a second signal kills before the run ends.
bool interrupt_watch_active();
void set_waited_group(pid_t group);

}  // namespace backendbench::planner
