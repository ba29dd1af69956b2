// The kernel worker's protocol: one typed request in, one typed response out, across a process
// boundary, in the shape of Bazel's JSON persistent workers (aesthetics.md §5). Each message is
// one line of JSON (its header: schema, version, kind and fields) followed by `payload_bytes`
// bytes of values: their structure in TorchScript's pickle, their tensors' storages as raw bytes.
//
//   list        → kernels: the backends the worker's manifest registers (or the load error)
//   unusable    → why one backend cannot run (a Python kernel whose module does not load)
//   call        inputs → the outputs, the inputs after the call, what the call's process saw
//   time        the case's value sets → timing figures and flags measured in the worker
//
// A GPU worker also has a Unix datagram socket (descriptor 3) to its supervisor: a response whose
// header says `shared_descriptors: n` brought n descriptors of device copies in one datagram
// there, sent before the message (device_share.h), instead of those storages' bytes.
//
// Inputs and value sets travel as values, or, where the supervisor made them from a case
// (`inputs`, `value_sets`: its argument text, seed, draw and salt), as that recipe alone: the
// worker makes the same values with the same deterministic materialize() (inputs.h).
//
// The supervisor reads every response as hostile input: sizes are bounded, a malformed message
// is an error of that worker (which is then stopped), and nothing in it can pass a case.
#pragma once

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace backendbench::worker {

inline constexpr int kProtocolVersion = 1;
inline constexpr const char* kRequestSchema = "backendbench-worker-request";
inline constexpr const char* kResponseSchema = "backendbench-worker-response";
// Bounds on what a supervisor reads from a worker.
inline constexpr size_t kMaxHeaderBytes = size_t{1} << 20;
inline constexpr uint64_t kMaxPayloadBytes = uint64_t{32} << 30;

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
// Reads one message from `fd`, waiting at most `timeout_ms` in all (< 0: no limit); nullopt when
// the pipe is closed before a message starts. Throws ProtocolError on a malformed or
// over-long message, and TimeoutError when the time runs out.
class TimeoutError : public ProtocolError {
 public:
  using ProtocolError::ProtocolError;
};
std::optional<Message> read_message(int fd, int64_t timeout_ms);

// Values to and from a payload: a tuple of IValues (storages shared between tensors stay shared;
// strides and offsets are kept; CUDA storages are copied to the host on the way out and restored
// to their device on the way in). load_values checks every length, index, dtype and extent.
// With `shared`, save_values may instead hand a large CUDA storage over as the descriptor of a
// device copy (device_share.h), appended to `shared` and named by its index in the table; such
// descriptors travel beside the message (the socket a GPU worker has) and load_values takes them.
std::vector<char> save_values(const std::vector<c10::IValue>& values, std::vector<int>* shared = nullptr);
std::vector<c10::IValue> load_values(const std::vector<char>& payload, const std::vector<int>& shared = {});

}  // namespace backendbench::worker
