// The device file of each GPU (/dev/nvidia<minor>): a served supervisor given one GPU is started
// seeing that GPU's file alone (entry_servers.h), because CUDA's start opens every GPU whose file
// it finds, one process at a time across the host. Sixteen processes starting CUDA at once over
// four H200s, each in bubblewrap, took 1.5-1.6 s in cuInit seeing all four files, 0.7-1.2 s
// seeing one each (scripts/cuda_start.py).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace backendbench::planner {

// The device file of each CUDA device this process sees, in CUDA's order (CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER applied): the driver's library gives each device's PCI address, the driver's
// /proc/driver/nvidia/gpus/<address>/information its minor number. Empty when the library, a
// device or its file is missing, or CUDA_VISIBLE_DEVICES names GPUs otherwise than by index
// (UUIDs, MIG instances): then every process sees every GPU, as without this.
std::vector<std::string> gpu_device_files();

// The minor number in the text of /proc/driver/nvidia/gpus/<address>/information
// ("Device Minor: \t 2"); nullopt when it has none.
std::optional<int> device_minor(const std::string& information);

// Whether two PCI addresses name one device: CUDA writes "0000:00:06.0", NVML "00000000:00:06.0",
// the driver's /proc lower case, CUDA upper.
bool same_pci_address(const std::string& a, const std::string& b);

// The device files every CUDA process needs besides its GPUs' (/dev/nvidiactl, the unified memory
// driver's, the capabilities folder), those of them that exist.
std::vector<std::string> shared_gpu_files();

}  // namespace backendbench::planner
