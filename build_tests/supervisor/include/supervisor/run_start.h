// What every front-end does before its first case, in one place: --help lists the settings
// (the framework's own help follows), the settings are parsed, the kernel libraries of the
// manifest are loaded, the verdicts file is started, and the run's salt is printed to `log`.
#pragma once

#include <optional>
#include <ostream>

#include "backendbench/settings.h"

namespace backendbench {

// The run's settings, or nullopt after printing the one error to stderr (exit with 2). With
// `kernel_manifest` null, no kernel worker starts (a process that may run no case itself: ./bench
// supervising its worker process; start_kernel_workers_for then starts them where it does).
std::optional<Settings> start_run(Frontend frontend, int& argc, char** argv, const char* kernel_manifest,
                                  std::ostream& log);
// Starts the kernel workers of the run's manifest (the settings', else `kernel_manifest`) unless
// its jobs need none or it serves entries; throws std::runtime_error when they cannot start.
void start_kernel_workers_for(const Settings& settings, const char* kernel_manifest);

// How both front-ends name a signal that killed a case: "SIG" + "SEGV" + " (Segmentation
// fault)", in pieces of static text, so a signal handler can write them (async-signal-safe).
struct SignalText {
  const char* prefix;       // "SIG", or "signal " for a number without a name
  const char* name;         // "SEGV", or "?"
  const char* description;  // "Segmentation fault", or "unknown"
};
SignalText signal_text(int signal_number);

}  // namespace backendbench
