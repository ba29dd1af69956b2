// CUDA memory handed from a kernel worker to its supervisor without a trip through the host.
//
// A check's outputs must reach the supervisor, which compares them; through the host (the
// worker's copy to the host, the pipe, the supervisor's copy back to the device) the 914-case
// TorchBench timing subset took 5x longer to check on an H100 than in one process. Here the worker
// copies a CUDA storage's bytes into an allocation of CUDA's virtual memory management made to be
// exported as a POSIX file descriptor (cuMemCreate, cuMemExportToShareableHandle) and sends the
// descriptor over a Unix socket (SCM_RIGHTS); the supervisor imports it, maps it read-only, copies
// the bytes into a tensor of its own on the device and unmaps it. Everything it checks is that
// copy: what the worker does to its allocation afterwards changes nothing. (CUDA's older IPC
// handles do not cross PID namespaces, and bubblewrap gives every worker its own; descriptors do.)
//
// The driver's functions are looked up in libcuda at run time: a build without CUDA, or a
// machine without the driver, simply has no sharing (available() is false) and values cross in
// the pipe as before.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

namespace backendbench::device_share {

// Storages smaller than this cross in the pipe: mapping costs more than copying them.
inline constexpr uint64_t kMinimumSharedBytes = uint64_t{1} << 20;
// At most this many descriptors per message (Linux's SCM_MAX_FD is 253): one datagram each way.
inline constexpr size_t kMaxDescriptors = 250;

// Whether this process can export and import memory of `device` as descriptors.
bool available(c10::Device device);

// Worker side: a new exportable allocation holding a copy of `bytes` (a contiguous CUDA uint8
// tensor), and its descriptor. The allocation lives until release_exports(). Throws
// std::runtime_error when the driver refuses.
int export_copy(const at::Tensor& bytes);
// Frees every allocation export_copy made (and closes their descriptors): call it once the
// supervisor has answered, i.e. copied them.
void release_exports();

// Supervisor side: the first `bytes` bytes of the allocation `descriptor` exports, copied into a
// new uint8 tensor on `device`. Throws std::runtime_error when the descriptor is not an exported
// allocation of that device or is smaller than `bytes`. Does not close `descriptor`.
at::Tensor import_copy(int descriptor, uint64_t bytes, c10::Device device);

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
