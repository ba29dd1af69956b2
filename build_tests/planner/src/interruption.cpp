// Signals that stop a run; see interruption.h.
#include "planner/interruption.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>

namespace backendbench::planner {

namespace {

constexpr int kCaught[] = {SIGINT, SIGTERM, SIGHUP};
volatile sig_atomic_t caught_signal = 0;
std::atomic<pid_t> waited_group{0};
std::atomic<bool> active{false};
struct sigaction previous[sizeof(kCaught) / sizeof(kCaught[0])];

void on_signal(int signal_number) {
  if (caught_signal == 0) {
    caught_signal = signal_number;
    return;
  }
  // A second signal: the user wants out now. Only async-signal-safe calls here.
  const pid_t group = waited_group.load();
  if (group > 0) ::killpg(group, SIGKILL);
  ::_exit(128 + signal_number);
}

}  // namespace

InterruptWatch::InterruptWatch() {
  if (active.exchange(true)) throw std::logic_error("InterruptWatch: one at a time");
  caught_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a wait in progress returns EINTR and looks again
  for (size_t i = 0; i < sizeof(kCaught) / sizeof(kCaught[0]); ++i) sigaction(kCaught[i], &action, &previous[i]);
}

InterruptWatch::~InterruptWatch() {
  for (size_t i = 0; i < sizeof(kCaught) / sizeof(kCaught[0]); ++i) sigaction(kCaught[i], &previous[i], nullptr);
  waited_group = 0;
  caught_signal = 0;
  active = false;
}

int interrupting_signal() { return caught_signal; }

std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(signal_number);
  }
}

std::string not_run_reason(int signal_number) {
  return "not run: the run was interrupted (" + signal_name(signal_number) + ") before this case had a verdict";
}

bool interrupt_watch_active() { return active; }

void set_waited_group(pid_t group) { waited_group = group; }

}  // namespace backendbench::planner
