// When a spare kernel worker a job takes is replaced; see spare_policy.h.
#include "backendbench/spare_policy.h"

#include <sched.h>

#include <thread>

namespace backendbench {

bool replaces_spare_at_once(std::optional<bool> setting, int usable_cores) {
  constexpr int kCoresForEarlySpares = 8;
  return setting.value_or(usable_cores >= kCoresForEarlySpares);
}

bool replaces_spare_at_once_here(const Settings& settings) {
  cpu_set_t usable;
  const int cores = sched_getaffinity(0, sizeof(usable), &usable) == 0 ? CPU_COUNT(&usable)
                                                                      : static_cast<int>(std::thread::hardware_concurrency());
  return replaces_spare_at_once(settings.early_spare, cores);
}

}  // namespace backendbench
