// Who holds the GPU, from NVML (gpu_holders.h). The management library and the CUDA driver are
// looked up at run time, as device_share.cpp does: a build or machine without them simply cannot
// say, and a case it fails reads as before.
#include "supervisor/gpu_holders.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include "backendbench/processes.h"

namespace backendbench {
namespace {

// NVML's own declarations, as its header (nvml.h) has them: the header is not on every machine.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
struct NvmlProcessInfo {  // nvmlProcessInfo_t, as nvmlDeviceGetComputeRunningProcesses_v3 fills it
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

struct Libraries {
  NvmlReturn (*init)() = nullptr;                                                  // nvmlInit_v2
  NvmlReturn (*by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;                 // nvmlDeviceGetHandleByPciBusId_v2
  NvmlReturn (*compute_processes)(NvmlDevice, unsigned int*, NvmlProcessInfo*) = nullptr;  // ..._v3
  int (*cu_device_get)(int*, int) = nullptr;                                       // cuDeviceGet
  int (*cu_pci_bus_id)(char*, int, int) = nullptr;                                 // cuDeviceGetPCIBusId
  bool ready = false;
};

const Libraries& libraries() {
  static const Libraries found = [] {
    Libraries l;
    void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml == nullptr || cuda == nullptr) return l;
    bool all = true;
    const auto find = [&](void* library, auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      all = all && function != nullptr;
    };
    find(nvml, l.init, "nvmlInit_v2");
    find(nvml, l.by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    find(nvml, l.compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3");
    find(cuda, l.cu_device_get, "cuDeviceGet");
    find(cuda, l.cu_pci_bus_id, "cuDeviceGetPCIBusId");
    l.ready = all && l.init() == kNvmlSuccess;
    return l;
  }();
  return found;
}

std::string name_of(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? "?" : name;
}

bool contains(const std::vector<pid_t>& pids, pid_t pid) { return std::find(pids.begin(), pids.end(), pid) != pids.end(); }

}  // namespace

std::optional<std::vector<pid_t>> gpu_compute_processes(int cuda_index) {
  const Libraries& l = libraries();
  if (!l.ready) return std::nullopt;
  // NVML numbers every GPU of the machine; CUDA only those visible to this process: the bus id is
  // the name both know.
  int device = 0;
  char bus_id[32] = {};
  if (l.cu_device_get(&device, cuda_index) != 0 || l.cu_pci_bus_id(bus_id, sizeof bus_id, device) != 0) return std::nullopt;
  NvmlDevice handle = nullptr;
  if (l.by_pci_bus_id(bus_id, &handle) != kNvmlSuccess) return std::nullopt;
  std::vector<NvmlProcessInfo> infos(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned int count = static_cast<unsigned int>(infos.size());
    const NvmlReturn result = l.compute_processes(handle, &count, infos.data());
    if (result == kNvmlInsufficientSize) {
      infos.resize(static_cast<size_t>(count) + 16);  // more came meanwhile: ask again
      continue;
    }
    if (result != kNvmlSuccess) return std::nullopt;
    std::vector<pid_t> pids;
    for (unsigned int i = 0; i < count; ++i) pids.push_back(static_cast<pid_t>(infos[i].pid));
    // This process holds a context on it (it has just probed it): ids of another PID namespace
    // (a supervisor in a container sees the host's) would name other processes here.
    if (!contains(pids, getpid())) return std::nullopt;
    return pids;
  }
  return std::nullopt;
}

std::vector<GpuHolder> classify_gpu_holders(const std::vector<pid_t>& holders, pid_t supervisor,
                                            const std::vector<pid_t>& supervisor_tree,
                                            const std::vector<pid_t>& timed_worker_tree,
                                            const std::function<std::string(pid_t)>& name_of) {
  std::vector<GpuHolder> said;
  for (const pid_t pid : holders) {
    GpuHolder holder{pid, name_of(pid), GpuHolder::Whose::kOtherProgram};
    if (pid == supervisor) holder.whose = GpuHolder::Whose::kSupervisor;
    else if (contains(timed_worker_tree, pid)) holder.whose = GpuHolder::Whose::kTimedWorker;
    else if (contains(supervisor_tree, pid)) holder.whose = GpuHolder::Whose::kOtherWorker;
    said.push_back(std::move(holder));
  }
  return said;
}

GpuHoldersSaid say_gpu_holders(const std::optional<std::vector<GpuHolder>>& holders) {
  GpuHoldersSaid said;
  if (!holders) return said;
  std::string others, ours;
  for (const GpuHolder& holder : *holders) {
    const std::string named = std::to_string(holder.pid) + " (" + holder.name + ")";
    switch (holder.whose) {
      case GpuHolder::Whose::kSupervisor:
        break;
      case GpuHolder::Whose::kOtherProgram:
        others += (others.empty() ? "" : ", ") + named;
        break;
      case GpuHolder::Whose::kTimedWorker:
        ours += (ours.empty() ? "" : ", ") + named + " of the timed kernel's worker";
        break;
      case GpuHolder::Whose::kOtherWorker:
        ours += (ours.empty() ? "" : ", ") + named + " of another kernel's worker, stopped";
        break;
    }
  }
  said.other_programs = !others.empty();
  said.others = others;
  if (said.other_programs) {
    said.text = "the GPU is shared with another program (" + others +
                "), whose work slows the reference as much as work a kernel left there: this says nothing of the "
                "kernel; time on a GPU no other program uses" +
                (ours.empty() ? "" : " (besides, of this run: " + ours + ")");
  } else if (!ours.empty()) {
    said.text = "processes holding the GPU besides the supervisor: " + ours;
  }
  return said;
}

GpuHoldersSaid gpu_holders_now(pid_t timed_worker) {
  const std::optional<std::vector<pid_t>> holders = gpu_compute_processes(0);
  if (!holders) return {};
  return say_gpu_holders(classify_gpu_holders(*holders, getpid(), processes::tree_of(getpid()),
                                              timed_worker > 0 ? processes::tree_of(timed_worker) : std::vector<pid_t>{},
                                              name_of));
}

}  // namespace backendbench
