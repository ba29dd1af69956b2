// A run's inputs handed to a CPU kernel worker in memory it cannot read before the supervisor's
// clock starts (supervisor/kernel_workers.h: bound_by_back_to_back).
//
// The supervisor makes a memory file (memfd) of the run's storages, sealed against growing and
// shrinking (a worker that shrank it would make the supervisor's writes fault and end it), and
// sends its descriptor with `prepare_run`; the worker maps it, every page at once, and builds the
// calls' inputs over it (load_values_over, worker_protocol.h) while it is still empty. The
// supervisor then stops every process of the worker's (processes::Stopped), writes the values,
// starts its clock and lets them go on: a kernel that computes its answers as its inputs appear
// does so while the clock runs. Mapped before the values come, the pages cost the run no faults
// (a fresh mapping's first touch took 70-110 us a MiB on the 2-core machine, a third of a relu).
// On CUDA the same can happen in device memory (BACKENDBENCH_CUDA_RUN_INPUTS=shared): device_share.h,
// DeviceMemoryFile.
#pragma once

#include <cstdint>
#include <memory>

namespace backendbench::worker {

class MemoryFile {
 public:
  // A new sealed file of `bytes` (at least a page), mapped read-write here. Throws
  // std::runtime_error when the system refuses.
  static std::shared_ptr<MemoryFile> create(uint64_t bytes);
  // The file `descriptor` names, which must be a memory file sealed against shrinking and growing
  // of exactly `bytes`, mapped read-write with every page faulted in now, and kept from children
  // this process forks. Does not close `descriptor` (the mapping outlives it). Throws
  // std::runtime_error otherwise.
  static std::shared_ptr<MemoryFile> adopt(int descriptor, uint64_t bytes);
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile();

  char* data() const { return data_; }
  uint64_t bytes() const { return bytes_; }
  // The file's descriptor (-1 where it was adopted: the adopter's to close).
  int descriptor() const { return descriptor_; }

 private:
  MemoryFile(int descriptor, char* data, uint64_t bytes) : descriptor_(descriptor), data_(data), bytes_(bytes) {}
  int descriptor_;
  char* data_;
  uint64_t bytes_;
};

}  // namespace backendbench::worker
