// When a spare kernel worker a job takes is replaced (start_spare_worker in kernel_workers.h): a
// header of its own, without ATen's, for the agents that decide their candidates' benches by it.
#pragma once

#include <optional>

#include "backendbench/settings.h"

namespace backendbench {

// Whether a spare a job takes is replaced at once (Settings::early_spare), given the cores this
// process may use: by default where there are at least 8. Measured: on an H200 machine (16 cores)
// Triton candidates one every 5 s were checked in 2.04 s instead of 5.78 s; on a 2-core machine
// Python candidates took 4.00 s instead of 0.59 s, the new spare's imports beside the check.
bool replaces_spare_at_once(std::optional<bool> setting, int usable_cores);
// The same for this process: its setting, and the cores it may use (sched_getaffinity).
bool replaces_spare_at_once_here(const Settings& settings);

}  // namespace backendbench
