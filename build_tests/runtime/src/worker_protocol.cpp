// Framing and payloads of the kernel worker's protocol; see worker_protocol.h.
#include "backendbench/worker_protocol.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <torch/serialize.h>

namespace backendbench::worker {
namespace {

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw ProtocolError(std::string("the worker's pipe broke: ") + std::strerror(errno));
    data += written;
    size -= static_cast<size_t>(written);
  }
}

using Clock = std::chrono::steady_clock;

// Reads up to `size` bytes into `data` before `deadline`; returns how many (0: end of the pipe).
size_t read_some(int fd, char* data, size_t size, std::optional<Clock::time_point> deadline) {
  for (;;) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) throw TimeoutError("no answer within the time limit");
      wait_ms = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    pollfd ready{fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, wait_ms);
    if (polled < 0 && errno == EINTR) continue;
    if (polled < 0) throw ProtocolError(std::string("cannot wait for the worker: ") + std::strerror(errno));
    if (polled == 0) continue;  // the deadline is checked above
    const ssize_t got = ::read(fd, data, size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw ProtocolError(std::string("cannot read from the worker: ") + std::strerror(errno));
    return static_cast<size_t>(got);
  }
}

uint64_t payload_size(const std::string& header) {
  // The header is JSON; the reader parses it fully later. Here only its payload size, which
  // the writer puts last: ...,"payload_bytes":<n>}
  const std::string key = "\"payload_bytes\":";
  const size_t at = header.rfind(key);
  if (at == std::string::npos) throw ProtocolError("a message without payload_bytes");
  uint64_t size = 0;
  size_t i = at + key.size();
  if (i >= header.size() || header[i] < '0' || header[i] > '9') throw ProtocolError("a malformed payload_bytes");
  for (; i < header.size() && header[i] >= '0' && header[i] <= '9'; ++i) {
    if (size > kMaxPayloadBytes / 10) throw ProtocolError("a payload over the limit");
    size = size * 10 + static_cast<uint64_t>(header[i] - '0');
  }
  if (i + 1 != header.size() || header[i] != '}') throw ProtocolError("payload_bytes is not the header's last field");
  if (size > kMaxPayloadBytes) throw ProtocolError("a payload over the limit");
  return size;
}

}  // namespace

void write_message(int fd, const Message& message) {
  std::string header = message.header;
  // payload_bytes goes last, so that a reader finds it without parsing first.
  if (header.empty() || header.back() != '}') throw ProtocolError("a header must be a JSON object");
  header.pop_back();
  header += std::string(header.size() > 1 ? "," : "") + "\"payload_bytes\":" + std::to_string(message.payload.size()) + "}\n";
  write_all(fd, header.data(), header.size());
  if (!message.payload.empty()) write_all(fd, message.payload.data(), message.payload.size());
}

std::optional<Message> read_message(int fd, int64_t timeout_ms) {
  std::optional<Clock::time_point> deadline;
  if (timeout_ms >= 0) deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Message message;
  // The header, a byte at a time up to its newline: the payload that follows stays unread.
  for (;;) {
    char c = 0;
    if (read_some(fd, &c, 1, deadline) == 0) {
      if (message.header.empty()) return std::nullopt;
      throw ProtocolError("the worker's pipe closed in the middle of a message");
    }
    if (c == '\n') break;
    message.header += c;
    if (message.header.size() > kMaxHeaderBytes) throw ProtocolError("a message header over the limit");
  }
  const uint64_t size = payload_size(message.header);
  // Grown as bytes arrive, never reserved up front: a size is only a claim.
  size_t done = 0;
  while (done < size) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size - done, uint64_t{1} << 24));
    message.payload.resize(done + chunk);
    const size_t got = read_some(fd, message.payload.data() + done, chunk, deadline);
    if (got == 0) throw ProtocolError("the worker's pipe closed in the middle of a message");
    done += got;
  }
  message.payload.resize(done);
  return message;
}

std::vector<char> save_values(const std::vector<c10::IValue>& values) {
  return torch::pickle_save(c10::ivalue::Tuple::create(values));
}

std::vector<c10::IValue> load_values(const std::vector<char>& payload) {
  c10::IValue loaded;
  try {
    loaded = torch::pickle_load(payload);
  } catch (const std::exception& error) {
    throw ProtocolError(std::string("a payload that does not load: ") + error.what());
  }
  if (!loaded.isTuple()) throw ProtocolError("a payload that is not a tuple");
  const auto& elements = loaded.toTupleRef().elements();
  return std::vector<c10::IValue>(elements.begin(), elements.end());
}

}  // namespace backendbench::worker
