// The GPU that CTest's resource allocation gave a CTest entry (its RESOURCE_GROUPS "gpus:1" and a
// resource spec file: `backendbench run` writes one, users pass it to ctest), bound before CUDA
// starts: CUDA_VISIBLE_DEVICES then names that GPU alone, so the entry, its kernel workers (the
// sandbox keeps the variable) and all they start use it as cuda:0.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace backendbench {

struct GpuSlot {
  std::string id;       // the resource spec's id of the GPU ("0", "1", ...)
  std::string visible;  // what CUDA_VISIBLE_DEVICES names: the id, or the id-th GPU of a list given before
};

// The allocation in CTest's variables (CTEST_RESOURCE_GROUP_COUNT, CTEST_RESOURCE_GROUP_<i>,
// CTEST_RESOURCE_GROUP_<i>_GPUS), read through `variable` (nullptr: unset); nullopt when CTest
// gave no GPU. Throws std::invalid_argument, naming the variable and the expected form, on an
// allocation that is not one GPU's.
std::optional<GpuSlot> ctest_gpu_slot(const std::function<const char*(const char*)>& variable);

// ctest_gpu_slot of this process's environment, applied: CUDA_VISIBLE_DEVICES set to the GPU
// (to 0 where BACKENDBENCH_ONE_GPU_FILE is set: a process whose /dev holds that GPU's device file
// alone, where CUDA numbers it 0; the slot still names it as the spec does).
// The allocation is then consumed (CTEST_RESOURCE_GROUP_COUNT unset, BACKENDBENCH_BOUND_GPU set
// to the id), so a process this one starts (./bench's own workers) keeps the binding and names
// the same GPU instead of binding again.
std::optional<GpuSlot> bind_ctest_gpu_slot();

// How many GPUs a run hands out, counted as a resource spec's ids count them (0, 1, ...: within
// what this process sees): CUDA's device count where CUDA has devices, else the length of
// CUDA_VISIBLE_DEVICES (read through `variable`) where a scheduler set it (Slurm's --gres on a
// machine whose GPUs this process cannot open), else 0.
int gpus_to_allocate(const std::function<const char*(const char*)>& variable, int cuda_devices);

// CTest's resource spec (JSON, version 1.0) for `gpus` GPUs, ids "0" to "<gpus - 1>", of `slots`
// slots each: a correctness entry takes one slot (RESOURCE_GROUPS gpus:1), a timing entry all of
// one GPU's (gpus:<slots>), so that timing shares its GPU with no other entry.
std::string ctest_resource_spec(int gpus, int slots);

}  // namespace backendbench
