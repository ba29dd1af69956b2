// Front-end start-up; see run_start.h.
#include "supervisor/run_start.h"

#include <algorithm>
#include <cstring>
#include <string.h>  // sigabbrev_np, sigdescr_np (glibc)
#include <iostream>

#include "backendbench/backend.h"
#include "backendbench/gpu_slot.h"
#include "supervisor/run_job.h"
#include "backendbench/timing.h"
#include "backendbench/verdict.h"
#include "supervisor/kernel_workers.h"

namespace backendbench {

std::optional<Settings> start_run(Frontend frontend, int& argc, char** argv, const char* kernel_manifest,
                                  std::ostream& log) {
  fix_large_allocations();  // the reference this process times, as the workers time theirs (timing.h)
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << settings_help(frontend) << "\n";
    }
  }
  Settings settings;
  try {
    settings = parse_settings(frontend, argc, argv);
    // Before anything starts CUDA: the GPU CTest gave this entry, if it gave one.
    if (const std::optional<GpuSlot> slot = bind_ctest_gpu_slot()) settings.gpu = slot->visible;
    if (!settings.job_argument.empty()) settings.jobs = jobs_from_argument(settings.job_argument);
    if (kernel_manifest != nullptr) start_kernel_workers_for(settings, kernel_manifest);
    // A worker of a supervising ./bench adds to the verdicts its supervisor started.
    if (!settings.verdicts_path.empty() && !settings.worker && !settings.serves()) {
      start_verdicts(settings.verdicts_path);
    }
  } catch (const std::exception& error) {
    std::cerr << error.what() << "\n";
    return std::nullopt;
  }
  if (!settings.sandbox) log << "backendbench: kernels run UNSANDBOXED (BACKENDBENCH_SANDBOX=none)\n";
  log << "backendbench: salt " << salt_text(settings.salt) << " (BACKENDBENCH_SALT=" << salt_text(settings.salt)
      << " replays this run's inputs)\n";
  return settings;
}

void start_kernel_workers_for(const Settings& settings, const char* kernel_manifest) {
  // Kernel code runs only in kernel workers (kernel_workers.h), never in this process. A served
  // supervisor starts the workers of each request's manifest (job_service.h).
  if (!needs_no_kernel_worker(settings.jobs) && !settings.serves()) {
    start_kernel_workers(settings.kernel_manifest.empty() ? kernel_manifest : settings.kernel_manifest.c_str(), settings);
  }
}

SignalText signal_text(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  const char* description = sigdescr_np(signal_number);
  return {name != nullptr ? "SIG" : "signal ", name != nullptr ? name : "?", description != nullptr ? description : "unknown"};
}

}  // namespace backendbench
