// CUDA memory handed from a kernel worker to its supervisor without a trip through the host.
//
// A check's outputs must reach the supervisor, which compares them; through the host (the
// worker's copy to the host, the pipe, the supervisor's copy back to the device) the 914-case
// TorchBench timing subset took 5x longer to check on an H100 than in one process. Here the worker
// copies a CUDA storage's bytes into a slot: an allocation of CUDA's virtual memory management made
// to be exported as a POSIX file descriptor (cuMemCreate, cuMemExportToShareableHandle), whose
// descriptor goes over a Unix socket (SCM_RIGHTS) the first time the slot is used; the supervisor
// imports and maps it read-only once, and copies each answer's bytes out into a tensor of its own
// on the device. Everything it checks is that copy: what the worker does to its slot afterwards
// changes nothing. (CUDA's older IPC
// handles do not cross PID namespaces, and bubblewrap gives every worker its own; descriptors do.)
//
// The driver's functions are looked up in libcuda at run time: a build without CUDA, or a
// machine without the driver, simply has no sharing (available() is false) and values cross in
// the pipe as before.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace backendbench::device_share {

// Storages smaller than this cross in the pipe: mapping costs more than copying them.
inline constexpr uint64_t kMinimumSharedBytes = uint64_t{1} << 20;
// At most this many descriptors per message (Linux's SCM_MAX_FD is 253): one datagram each way.
inline constexpr size_t kMaxDescriptors = 250;

// Whether this process can export and import memory of `device` as descriptors.
bool available(c10::Device device);
// Whether `device` runs one process's kernels at a time: it does unless MPS shares its contexts
// (the driver says so), which lets kernels of different processes run side by side.
bool one_process_at_a_time(c10::Device device);

// Worker side: the shared buffers ("slots") a worker copies its answers' large storages into.
// Each slot is an exportable allocation, exported and sent once; later answers reuse it, so an
// answer costs a copy, not the driver's create, map, export, import and unmap (those took about
// 2 ms a call on an H100, a third of the check's cost). A slot is free again once the supervisor
// asks the next question (it has copied the last answer out by then): the answers to one question
// (a call of several draws) each fill slots of their own.
class Exports {
 public:
  // What an answer brings besides its storages: slots the supervisor has not seen (with their
  // sizes and descriptors, sent in this order) and slots retired to stay under the size limit.
  struct Changes {
    std::vector<uint64_t> new_slots, new_sizes, retired;
    std::vector<int> descriptors;
    bool empty() const { return new_slots.empty() && retired.empty(); }
  };
  explicit Exports(uint64_t limit_bytes = kDefaultLimitBytes);
  Exports(const Exports&) = delete;
  Exports& operator=(const Exports&) = delete;
  ~Exports();
  // A free slot (or a new one) now holding a copy of `bytes` (a contiguous CUDA uint8 tensor);
  // its id. Throws std::runtime_error when the driver refuses.
  uint64_t place(const at::Tensor& bytes);
  // Once an answer's storages are placed: waits for the copies, returns what to announce.
  Changes finish();
  // The announced slots reached the supervisor (until then they are announced again).
  void sent(const Changes& changes);
  // The supervisor asks again: it has copied the last answer out, every slot is free.
  void reuse();

  static constexpr uint64_t kDefaultLimitBytes = uint64_t{4} << 30;

 private:
  struct Slot;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<uint64_t> retired_;
  uint64_t next_id_ = 0, limit_bytes_;
  bool synchronized_ = false;  // this answer has waited for the device once
};

// Supervisor side: a worker's slots, each imported and mapped read-only once. What is copied out
// is a new tensor of this process's: whatever the worker writes to its slot later changes nothing.
class Imports {
 public:
  Imports();
  Imports(const Imports&) = delete;
  Imports& operator=(const Imports&) = delete;
  ~Imports();
  // Maps the `bytes`-long allocation `descriptor` exports as slot `slot`. Throws
  // std::runtime_error when the id is taken, the count is over kMaxSlots, or the descriptor is not
  // an exported allocation of `device` of at least `bytes`. Does not close `descriptor`.
  void adopt(uint64_t slot, int descriptor, uint64_t bytes, c10::Device device);
  // Unmaps slot `slot`; throws std::runtime_error when there is none.
  void retire(uint64_t slot);
  // The first `bytes` of slot `slot`, copied into a new uint8 tensor on its device (the copy is
  // queued: synchronize() before the first and after the last of an answer's); throws
  // std::runtime_error when there is no such slot or it is shorter.
  at::Tensor copy_out(uint64_t slot, uint64_t bytes) const;
  // Waits for this process's work on the device.
  void synchronize() const;
  void clear();

  static constexpr size_t kMaxSlots = 1024;

 private:
  struct Slot;
  std::map<uint64_t, std::unique_ptr<Slot>> slots_;
};

// A run's inputs handed from the supervisor to a CUDA kernel worker in device memory it cannot
// read before the supervisor's clock starts (memory_file.h's CUDA twin; kernel_workers.h:
// bound_by_back_to_back, under BACKENDBENCH_CUDA_RUN_INPUTS=shared, the default). The supervisor
// makes an exportable allocation, maps it read-write and sends its descriptor with `prepare_run`;
// the worker imports and maps it read-write and builds the calls' inputs over it while it is
// still empty. The supervisor then locks the worker's processes (ProcessLocks, below: refused
// while any of their work is left on the GPU), stops them, writes the values with a kernel of its
// own (worker_protocol.h: SplitValues; a kernel, not a copy engine's transfer, which runs beside
// other contexts' kernels), waits for it, starts its clock, lets them go on and unlocks them.
// Stopping alone does not reach a kernel of the worker's left running on the GPU: without MPS the
// GPU runs one context's kernels at a time, but it still gives such a kernel time slices while the
// values are written (on an H200 gallery impl14's watchers had finished a run's work before its
// first call); the lock does. (Under MPS contexts run side by side: one_process_at_a_time() is
// false, and the supervisor does not use one.)
class DeviceMemoryFile {
 public:
  // Supervisor side: a new exportable allocation of at least `bytes` on `device`, mapped
  // read-write here; descriptor() is what the worker is sent. Throws std::runtime_error when the
  // driver refuses or sharing is not available().
  static std::shared_ptr<DeviceMemoryFile> create(uint64_t bytes, c10::Device device);
  // Worker side: the allocation `descriptor` exports, of at least `bytes` on `device`, mapped
  // read-write. Does not close `descriptor`. Throws std::runtime_error otherwise.
  static std::shared_ptr<DeviceMemoryFile> adopt(int descriptor, uint64_t bytes, c10::Device device);
  DeviceMemoryFile(const DeviceMemoryFile&) = delete;
  DeviceMemoryFile& operator=(const DeviceMemoryFile&) = delete;
  ~DeviceMemoryFile();

  // The allocation's address on device(): its first bytes() are the run's.
  char* data() const;
  uint64_t bytes() const { return bytes_; }
  c10::Device device() const { return device_; }
  // The exported descriptor (-1 in the worker, which imported it).
  int descriptor() const { return descriptor_; }

 private:
  struct Allocation;
  DeviceMemoryFile(std::unique_ptr<Allocation> allocation, uint64_t bytes, c10::Device device, int descriptor);
  std::unique_ptr<Allocation> allocation_;
  uint64_t bytes_;
  c10::Device device_;
  int descriptor_;
};

// Other processes' CUDA work held still: the driver's checkpoint lock (cuCheckpointProcessLock,
// drivers of CUDA 12.8 on). A locked process's CUDA calls wait until it is unlocked; the driver
// waits up to a timeout for the process to be locked and otherwise leaves it running. Kernels
// already on the GPU are not stopped: a lock was refused while a call of the process's waited for
// one (gallery cuda_timing_cheats impl14, whose watchers never finish), but taken while a spin it
// had queued with nothing waiting for it ran on (gallery cuda_neighbours impl3, on an H100,
// 2026-12-06); so the supervisor also finds the GPU idle from outside (its worker_pool.h:
// gpu_busy_now). It locks a CUDA worker's processes before it writes a run's inputs into a
// DeviceMemoryFile and unlocks them once its clock runs, so that no kernel of theirs starts while
// the values arrive. The driver serves the lock from a thread inside the locked process, so a
// process that is stopped (SIGSTOP) never answers: lock first, stop after, continue before
// unlocking. Nothing stops a process that rewrites that thread's answers (the driver's own code)
// from lying about it.
// Seen on an H100 (2026-12-06): a process of another PID namespace that saw the host's /proc
// could not be locked (CUDA_ERROR_NOT_INITIALIZED); bubblewrap's workers, which mount their own
// /proc, could.
class ProcessLocks {
 public:
  // Whether this machine's driver can lock processes.
  static bool available();
  // Locks each process of `pids` that uses CUDA (one that does not, and holds no GPU device file,
  // is left alone), waiting up to `timeout_ms` for its work on the GPU; stops at the first that
  // cannot be locked, or that holds the GPU while the driver reports no CUDA state of it.
  ProcessLocks(const std::vector<pid_t>& pids, int timeout_ms);
  ProcessLocks(const ProcessLocks&) = delete;
  ProcessLocks& operator=(const ProcessLocks&) = delete;
  ~ProcessLocks();  // unlocks those still locked
  // Every process of `pids` that uses CUDA is locked, and at least one does.
  bool locked() const { return error_.empty(); }
  // Why not: "" when locked(); work_left() where a process's work did not finish in time.
  const std::string& error() const { return error_; }
  bool work_left() const { return work_left_; }
  // The processes locked (host PIDs).
  const std::vector<pid_t>& pids() const { return locked_; }
  // None of `pids` uses CUDA (or holds the GPU's device files): nothing to lock.
  bool none_use_cuda() const { return none_use_cuda_; }
  // The processes ended while locked: nothing is left to unlock (the driver is not asked).
  void forget() { locked_.clear(); }
  // Unlocks each (they must be running, not stopped); throws std::runtime_error when one refuses.
  void unlock();

 private:
  std::vector<pid_t> locked_;
  std::string error_;
  bool work_left_ = false;
  bool none_use_cuda_ = false;
};

// Whether process `pid` has a file whose path starts with `prefix` open or mapped (/proc/<pid>/fd
// and /proc/<pid>/maps): ProcessLocks asks it of kGpuDeviceFiles for a process the driver knows
// nothing of. True too where its descriptors cannot be read (it cannot be told); false once it
// has ended.
inline constexpr const char* kGpuDeviceFiles = "/dev/nvidia";
bool holds_device_file(pid_t pid, const std::string& prefix);

// Descriptors over a Unix datagram socket: all of them in one datagram.
void send_descriptors(int socket, const std::vector<int>& descriptors);
// Receives one datagram of exactly `count` descriptors (waiting at most `timeout_ms`); throws
// std::runtime_error otherwise (closing whatever arrived).
std::vector<int> receive_descriptors(int socket, size_t count, int timeout_ms);

// Descriptors a message brought, closed when it goes.
class Descriptors {
 public:
  Descriptors() = default;
  explicit Descriptors(std::vector<int> descriptors) : descriptors_(std::move(descriptors)) {}
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  Descriptors(Descriptors&& other) noexcept : descriptors_(std::move(other.descriptors_)) { other.descriptors_.clear(); }
  Descriptors& operator=(Descriptors&& other) noexcept;
  ~Descriptors();
  const std::vector<int>& get() const { return descriptors_; }

 private:
  std::vector<int> descriptors_;
};

}  // namespace backendbench::device_share
