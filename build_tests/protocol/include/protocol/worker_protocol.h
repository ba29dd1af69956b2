// The kernel worker's protocol: one typed request in, one typed response out, across a process
// boundary, in the shape of Bazel's JSON persistent workers (aesthetics.md §5). Each message is
// one line of JSON (its header: schema, version, kind and fields) followed by `payload_bytes`
// bytes of values: their structure in TorchScript's pickle, their tensors' storages as raw bytes.
//
//   round_trip  → (nothing): answered only before the worker loads kernel code (its first
//               requests), so the supervisor's clock over it times the pipe and the loop alone
//   run_inputs_probe → (nothing): a GPU worker's, answered only before it loads kernel code, as
//               round_trip: with `memory_file_bytes` (a DeviceMemoryFile's descriptor before it)
//               the memory adopted; without, one kernel over it and the device synchronised, the
//               supervisor timing the shared path's own cost (worker_pool.h: run_inputs_path)
//   load        manifest → (nothing): a spare worker's first request, the manifest to load
//   list        → kernels: the backends the worker's manifest registers (or the load error)
//   unusable    → why one backend cannot run (a Python kernel whose module does not load)
//   call        inputs → the outputs, the inputs after the call, what the call's process saw
//   time        the case's value sets → the interleaved samples measured in the worker, and
//               each batch's last kernel outputs (TimedOutputSampler) for the supervisor to judge
//   prepare_run a count, one call's output blocks' bytes and the calls' inputs → (nothing): the
//               inputs of that many calls made ready, and memory for their outputs (timing.h). The
//               inputs are the head of their values (SplitValues) in the payload over a memory
//               file whose descriptor comes before the request (`memory_file_bytes`;
//               memory_file.h, on CUDA device_share.h's DeviceMemoryFile), empty until the
//               supervisor writes them with the worker stopped; on CUDA without shared memory the
//               first call's recipe, each call a draw of its own (the recipe's draw plus the
//               call's index) made here
//   run         → the last call's index (`value_set`), once the calls made ready ran back to back,
//               every call's outputs kept, and every device is synchronised; the supervisor times it
//   run_digests `key` → one list of digests (output_digests) a call of that run, at once; timed too
//   run_output  `first` and `count` → those calls' outputs, a tuple each
//
// A worker also has a Unix datagram socket (descriptor 3) to its supervisor: it is sent its runs'
// memory files there, and a GPU worker copies large CUDA storages into shared slots instead of
// the payload (device_share.h). A response whose header
// says `shared_descriptors: n` brought n descriptors in one datagram there, sent before the
// message: the slots `new_slots` names ([id, bytes] each, in that order). `retired_slots` lists
// slots the worker gave up.
//
// Inputs and value sets travel as values, or, where the supervisor made them from a case
// (`inputs`, `value_sets`: its argument text, seed, draw and salt), as that recipe alone: the
// worker makes the same values with the same deterministic materialize() (inputs.h). A call whose
// recipe says `timed_next` (./bench's checks) has the worker keep the inputs it made, and the
// time request that follows takes them instead of making them again (KeptDraws).
//
// The supervisor reads every response as hostile input: sizes are bounded, a malformed message
// is an error of that worker (which is then stopped), and nothing in it can pass a case.
#pragma once

#include <ATen/core/ivalue.h>
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/device_share.h"
#include "protocol/memory_file.h"

namespace c10 {
class OperatorHandle;
}

namespace backendbench {
struct InputDraw;  // backend.h
}

namespace backendbench::worker {

inline constexpr int kProtocolVersion = 2;
inline constexpr const char* kRequestSchema = "backendbench-worker-request";
inline constexpr const char* kResponseSchema = "backendbench-worker-response";
// Bounds on what a supervisor reads from a worker.
inline constexpr size_t kMaxHeaderBytes = size_t{1} << 20;
inline constexpr uint64_t kMaxPayloadBytes = uint64_t{32} << 30;
// The most calls back to back one `prepare_run` may ask for (the supervisor asks fewer: kernel_workers.h).
inline constexpr int64_t kMostBackToBackCalls = 100000;

// A malformed message, or a pipe that closed or broke in the middle of one.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One message: its JSON header (as text, parsed by the reader) and its payload.
struct Message {
  std::string header;  // one JSON object, no newline
  std::vector<char> payload;
};

// Writes `message` whole to `fd`; throws ProtocolError when the pipe breaks.
void write_message(int fd, const Message& message);
class TimeoutError : public ProtocolError {
 public:
  using ProtocolError::ProtocolError;
};
// The reading end of one pipe. It reads in chunks and keeps what it read past a message's header
// for the next message (the header's newline is its only end: read a byte at a time, a header
// cost a poll and a read per byte, about 1 ms a message).
class MessageReader {
 public:
  explicit MessageReader(int fd) : fd_(fd) {}
  // Reads one message, waiting at most `timeout_ms` in all (< 0: no limit); nullopt when the pipe
  // is closed before a message starts. Throws ProtocolError on a malformed or over-long message
  // (a payload over `max_payload_bytes`, what the request can need, is refused from its header,
  // before a byte of it is kept), and TimeoutError when the time runs out.
  std::optional<Message> read(int64_t timeout_ms, uint64_t max_payload_bytes = kMaxPayloadBytes);

 private:
  int fd_;
  std::string unread_;
};

// Values to and from a payload: a tuple of IValues (storages shared between tensors stay shared;
// strides and offsets are kept; CUDA storages are copied to the host on the way out and restored
// to their device on the way in). load_values checks every length, index, dtype and extent.
// With `exports`, save_values may instead copy a large CUDA storage into one of the worker's
// shared slots (device_share.h), named by its id in the table; load_values copies it out of the
// supervisor's `imports`, where the slot's descriptor, sent beside an earlier or this message
// (the socket a GPU worker has), was mapped.
std::vector<char> save_values(const std::vector<c10::IValue>& values, device_share::Exports* exports = nullptr);
std::vector<c10::IValue> load_values(const std::vector<char>& payload, const device_share::Imports* imports = nullptr);

// Values split for a memory file (memory_file.h; on CUDA device_share.h: DeviceMemoryFile): the
// payload save_values would make, less its storages' bytes (`head`, which crosses in the
// message), and where each storage's bytes go in the file (`file_bytes` long), which the
// supervisor writes later (write_storages). Every storage must be on one device, the CPU or one
// CUDA device.
class SplitValues {
 public:
  explicit SplitValues(const std::vector<c10::IValue>& values);
  const std::vector<char>& head() const { return head_; }
  uint64_t file_bytes() const { return file_bytes_; }
  c10::Device device() const { return device_; }
  // Copies every storage's bytes to its place in `file` (file_bytes() long, on device()). On CUDA
  // by a kernel (device_share.h says why), and waits for it: the values are there on return.
  void write_storages(char* file) const;

 private:
  std::vector<char> head_;
  uint64_t file_bytes_ = 0;
  c10::Device device_ = c10::Device(c10::DeviceType::CPU);
  std::vector<std::pair<c10::Storage, uint64_t>> placed_;  // a storage and its offset in the file
};

// Memory a SplitValues' storages are laid over: a CPU memory file's or a CUDA one's.
struct MemoryOver {
  char* data = nullptr;  // an address on `device`
  uint64_t bytes = 0;
  c10::Device device = c10::Device(c10::DeviceType::CPU);
  std::shared_ptr<const void> owner;  // kept mapped while any storage over it lives
};
MemoryOver memory_over(const std::shared_ptr<MemoryFile>& file);
MemoryOver memory_over(const std::shared_ptr<device_share::DeviceMemoryFile>& file);

// The values of a SplitValues' head over `memory`: their storages are its memory, not copies
// (what is written there later is what they hold), and keep it mapped. Checked as load_values
// checks a payload; every storage must be on the memory's device and inside it.
std::vector<c10::IValue> load_values_over(const std::vector<char>& head, const MemoryOver& memory);

// One digest per tensor of `outputs` (tensors_in order): the wrapping sum of its values' 4-byte
// words, each mixed with `key` (multiplied and folded: no sum made before the key is known gives
// it), and of the bytes after the last whole word; one read of the values.
// A `run_digests` answer carries every call's, under the key its request brought, computed right
// after the run; the outputs the supervisor fetches after it must have the same, so the work was
// done when it answered, and the digests could not be made before the key came with the request.
std::vector<int64_t> output_digests(const std::vector<c10::IValue>& outputs, uint64_t key);

// A worker's inputs of the latest case's draws, as made before the call, for the time request
// that follows (0.7 s of ./bench's 68 on the 914-case subset, H200, went to making them again).
// Only one case's draws are kept. What the worker times on is its word anyway, bounded from
// outside (kernel_workers.h), so a kernel that changes them gains nothing.
class KeptDraws {
 public:
  // Keeps a copy of `inputs` as draw `draw` of the case `case_key`; drops any other case's.
  // Returns the copy, untouched until taken (the call's read-only check reads its bytes).
  const std::vector<c10::IValue>& keep(const std::string& case_key, int draw, const std::vector<c10::IValue>& inputs);
  // The inputs kept for that draw, handed over once; nullopt when none are.
  std::optional<std::vector<c10::IValue>> take(const std::string& case_key, int draw);
  void clear();

 private:
  std::string case_key_;
  std::map<int, std::vector<c10::IValue>> kept_;
};

// The header every request starts from (its kind), and every response.
nlohmann::json request_header(const std::string& kind);
nlohmann::json response_header();
// A request about one call of one backend on one operator: call and time share it.
nlohmann::json call_request(const std::string& kind, const std::string& op_display, const std::string& backend,
                            const c10::OperatorHandle& handle, c10::Device device);
// How a stack of inputs was made (InputDraw), for a worker to make the same values.
nlohmann::json draw_json(const InputDraw& drawn);
// Starts CUDA on `device` now rather than on the first case (a worker before its first request,
// a supervisor while its workers start); a failure is left for that case.
void start_cuda_on(c10::Device device);

}  // namespace backendbench::worker
