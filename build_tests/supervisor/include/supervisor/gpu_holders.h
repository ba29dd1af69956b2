// Who holds the GPU when the supervisor finds it busy where it must be idle (before it times the
// reference, before it hands a run's inputs over): the processes with a CUDA context on the
// device, as the driver's management library lists them (NVML, loaded at run time), each said as
// this supervisor's own, the timed kernel's worker's, another of this supervisor's workers, or
// another program's. Work of another program slows the reference as much as work a kernel left
// running there, and a case failed for it must say so rather than blame the kernel (flag
// `gpu_shared`). A process holds a context whether or not it has work on the GPU at that moment:
// the list says who could be busy, not who is.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace backendbench {

struct GpuHolder {
  enum class Whose { kSupervisor, kTimedWorker, kOtherWorker, kOtherProgram };
  pid_t pid = 0;
  std::string name;  // its /proc/<pid>/comm
  Whose whose = Whose::kOtherProgram;
};

// The processes with a compute context on CUDA device `cuda_index` (as this process numbers its
// visible devices); nullopt where NVML cannot say: no management library, a device it does not
// list, or process ids of another PID namespace than this process's (its own is not among them).
std::optional<std::vector<pid_t>> gpu_compute_processes(int cuda_index);

// `holders` said by whose they are: `supervisor` itself, a process of `timed_worker_tree`, another
// process below the supervisor (`supervisor_tree`: its other workers), or another program.
std::vector<GpuHolder> classify_gpu_holders(const std::vector<pid_t>& holders, pid_t supervisor,
                                            const std::vector<pid_t>& supervisor_tree,
                                            const std::vector<pid_t>& timed_worker_tree,
                                            const std::function<std::string(pid_t)>& name_of);

// What a failed case says of the GPU's holders, past the supervisor: "" where NVML could not say
// (nullopt) or nobody else holds it.
struct GpuHoldersSaid {
  bool other_programs = false;  // some holder is another program's: the case fails as gpu_shared
  std::string others;           // those: "777 (python3), ..."
  std::string text;
};
GpuHoldersSaid say_gpu_holders(const std::optional<std::vector<GpuHolder>>& holders);

// The above for this moment: the holders of device 0 (the supervisor's visible GPU), said.
GpuHoldersSaid gpu_holders_now(pid_t timed_worker);

}  // namespace backendbench
