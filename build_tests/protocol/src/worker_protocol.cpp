// Framing and payloads of the kernel worker's protocol; see worker_protocol.h.
#include "protocol/worker_protocol.h"

#include <poll.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include <ATen/core/dispatch/Dispatcher.h>

#include "backendbench/backend.h"
#include "language/json_text.h"
#include "protocol/device_share.h"
#include "backendbench/tensor_values.h"

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

std::optional<Message> MessageReader::read(int64_t timeout_ms, uint64_t max_payload_bytes) {
  std::optional<Clock::time_point> deadline;
  if (timeout_ms >= 0) deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Message message;
  // The header, up to its newline; bytes read past it stay in unread_ for what follows.
  for (size_t searched = 0;;) {
    const size_t newline = unread_.find('\n', searched);
    if (newline != std::string::npos) {
      if (newline > kMaxHeaderBytes) throw ProtocolError("a message header over the limit");
      message.header = unread_.substr(0, newline);
      unread_.erase(0, newline + 1);
      break;
    }
    if (unread_.size() > kMaxHeaderBytes) throw ProtocolError("a message header over the limit");
    searched = unread_.size();
    char chunk[1 << 16];
    const size_t got = read_some(fd_, chunk, sizeof chunk, deadline);
    if (got == 0) {
      if (unread_.empty()) return std::nullopt;
      throw ProtocolError("the worker's pipe closed in the middle of a message");
    }
    unread_.append(chunk, got);
  }
  const uint64_t size = payload_size(message.header);
  if (size > max_payload_bytes) {
    throw ProtocolError("a payload of " + std::to_string(size) + " bytes, more than the " + std::to_string(max_payload_bytes) +
                        " its request can need");
  }
  // What was read already, then the rest; grown as bytes arrive, never reserved up front: a
  // size is only a claim.
  size_t done = static_cast<size_t>(std::min<uint64_t>(size, unread_.size()));
  message.payload.assign(unread_.begin(), unread_.begin() + static_cast<std::ptrdiff_t>(done));
  unread_.erase(0, done);
  while (done < size) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size - done, uint64_t{1} << 24));
    message.payload.resize(done + chunk);
    const size_t got = read_some(fd_, message.payload.data() + done, chunk, deadline);
    if (got == 0) throw ProtocolError("the worker's pipe closed in the middle of a message");
    done += got;
  }
  message.payload.resize(done);
  return message;
}

// A payload: three little-endian u64 lengths, then the table of storages and tensors (JSON),
// the values' structure (TorchScript's pickle, tensors as indices into the table), and each
// storage's bytes, 64-byte aligned. Unlike torch::pickle_save (a zip archive with a CRC over
// every byte) the bytes are copied once on each side, straight from and to the device.
namespace {

using json = nlohmann::json;
constexpr size_t kAlignment = 64;

size_t aligned(size_t size) { return (size + kAlignment - 1) / kAlignment * kAlignment; }

void put_u64(std::vector<char>& out, size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

uint64_t get_u64(const std::vector<char>& in, size_t at) {
  if (at + 8 > in.size()) throw ProtocolError("a payload shorter than its lengths");
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return value;
}

}  // namespace

namespace {

constexpr uint32_t kDigestMultiplier = 0x9E3779B1u;

// One 4-byte word keyed: multiplied after the key is mixed in, then its high bits folded into its
// low ones (an arithmetic shift, as ATen's on int32), so that no sum of the words (or of their
// bits) made before the key was known gives the digest. 4-byte lanes, so that it vectorises.
inline int64_t keyed_word(uint32_t word, uint32_t key) {
  const uint32_t mixed = (word ^ key) * kDigestMultiplier;
  return static_cast<int32_t>(mixed ^ static_cast<uint32_t>(static_cast<int32_t>(mixed) >> 15));
}

// The keyed sum of `count` words at `data`, in 64-bit lanes of partial sums. Built also for AVX2
// (chosen at load where the CPU has it; the supervisor and its workers run on one machine, so
// both choose alike, and both give the same sums): there a 4-byte product vectorises, and a read of
// 256 MiB took 9 ms on the 2-core machine instead of 35.
__attribute__((target_clones("avx2", "default"))) int64_t keyed_span_sum(const uint32_t* data, int64_t count,
                                                                         uint32_t key) {
  int64_t sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += keyed_word(data[i], key);
  return sum;
}

// The keyed sum of `words` (contiguous int32) on their device.
uint64_t keyed_sum(const at::Tensor& words, uint32_t key) {
  if (words.numel() == 0) return 0;
  if (words.is_cpu()) {
    const auto* data = static_cast<const uint32_t*>(words.data_ptr());
    return at::parallel_reduce(
        0, words.numel(), int64_t{1} << 18, uint64_t{0},
        [&](int64_t begin, int64_t end, uint64_t sum) {
          return sum + static_cast<uint64_t>(keyed_span_sum(data + begin, end - begin, key));
        },
        [](uint64_t a, uint64_t b) { return a + b; });
  }
  // Elsewhere ATen's operators, with the same arithmetic (int32 products wrap on the devices we run).
  const at::Tensor mixed = words.bitwise_xor(static_cast<int32_t>(key)).mul_(static_cast<int32_t>(kDigestMultiplier));
  return static_cast<uint64_t>(mixed.bitwise_xor(mixed.bitwise_right_shift(15)).sum(at::kLong).item<int64_t>());
}

}  // namespace

std::vector<int64_t> output_digests(const std::vector<c10::IValue>& outputs, uint64_t key) {
  std::vector<int64_t> digests;
  for (const at::Tensor& tensor : tensors_in(outputs)) {
    if (!tensor.defined() || tensor.layout() != at::kStrided) {
      digests.push_back(0);
      continue;
    }
    // The keyed sum of its 4-byte words (wrapping) and the sum of the bytes left over: one read
    // of the values (a byte-wise sum took 40 ms over 16 MiB on the 2-core machine).
    // (A view that starts within a word is copied first: the digest is of the values, wherever
    // they lie.)
    at::Tensor bytes = tensor.contiguous().reshape({-1}).view(at::kByte);
    if (bytes.storage_offset() % 4 != 0) bytes = bytes.clone();
    const int64_t aligned = bytes.numel() / 4 * 4;
    uint64_t digest = aligned > 0 ? keyed_sum(bytes.narrow(0, 0, aligned).view(at::kInt), static_cast<uint32_t>(key) ^
                                                                                        static_cast<uint32_t>(key >> 32))
                                  : 0;
    if (aligned < bytes.numel()) {
      digest += static_cast<uint64_t>(bytes.narrow(0, aligned, bytes.numel() - aligned).sum(at::kLong).item<int64_t>());
    }
    digests.push_back(static_cast<int64_t>(digest));
  }
  return digests;
}

namespace {

// What save_values and SplitValues make alike: the table of storages and tensors, the pickled
// structure, and the storages whose bytes follow (an empty one where a slot holds them).
struct Serialized {
  std::string table_text;
  std::vector<char> structure;
  std::vector<c10::Storage> kept;
};

Serialized serialize(const std::vector<c10::IValue>& values, device_share::Exports* exports) {
  std::vector<at::Tensor> table;
  Serialized made;
  made.structure = torch::jit::pickle(c10::ivalue::Tuple::create(values), &table);
  json storages = json::array(), tensors = json::array();
  std::map<const c10::StorageImpl*, size_t> index_of;
  for (const at::Tensor& tensor : table) {
    if (!tensor.defined()) {
      tensors.push_back({{"defined", false}});
      continue;
    }
    if (tensor.layout() != at::kStrided) throw ProtocolError("a tensor that is not strided cannot be sent");
    const c10::Storage& storage = tensor.storage();
    auto [it, added] = index_of.emplace(storage.unsafeGetStorageImpl(), made.kept.size());
    if (added) {
      json entry = {{"bytes", storage.nbytes()}, {"device", storage.device().str()}};
      // A large CUDA storage goes as a device copy in a shared slot when the reader can take one
      // (device_share.h); its bytes are then not in the payload.
      bool shared_here = false;
      if (exports != nullptr && storage.nbytes() >= device_share::kMinimumSharedBytes &&
          device_share::available(storage.device())) {
        try {
          entry["shared"] = exports->place(storage_bytes(storage).contiguous());
          shared_here = true;
        } catch (const std::exception&) {
          // The driver refused: the bytes go in the payload.
        }
      }
      made.kept.push_back(shared_here ? c10::Storage() : storage);
      storages.push_back(entry);
    }
    tensors.push_back({{"storage", it->second},
                       {"offset", tensor.storage_offset()},
                       {"sizes", tensor.sizes().vec()},
                       {"strides", tensor.strides().vec()},
                       {"dtype", static_cast<int>(tensor.scalar_type())},
                       {"requires_grad", tensor.requires_grad()}});
  }
  made.table_text = json_text::dump(json{{"storages", storages}, {"tensors", tensors}});
  return made;
}

// The payload's first bytes: its counts, table and structure, to the first storage's start.
std::vector<char> head_of(const Serialized& made) {
  std::vector<char> out(aligned(24 + made.table_text.size() + made.structure.size()));
  put_u64(out, 0, made.table_text.size());
  put_u64(out, 8, made.structure.size());
  put_u64(out, 16, made.kept.size());
  std::memcpy(out.data() + 24, made.table_text.data(), made.table_text.size());
  std::memcpy(out.data() + 24 + made.table_text.size(), made.structure.data(), made.structure.size());
  return out;
}

}  // namespace

std::vector<char> save_values(const std::vector<c10::IValue>& values, device_share::Exports* exports) {
  const Serialized made = serialize(values, exports);
  std::vector<char> out = head_of(made);
  size_t size = out.size();
  std::vector<size_t> starts;
  for (const c10::Storage& storage : made.kept) starts.push_back(size), size = aligned(size + (storage ? storage.nbytes() : 0));
  out.resize(size);
  for (size_t i = 0; i < made.kept.size(); ++i) {
    if (!made.kept[i] || made.kept[i].nbytes() == 0) continue;
    at::from_blob(out.data() + starts[i], {static_cast<int64_t>(made.kept[i].nbytes())}, at::kByte)
        .copy_(storage_bytes(made.kept[i]));
  }
  return out;
}

SplitValues::SplitValues(const std::vector<c10::IValue>& values) {
  const Serialized made = serialize(values, nullptr);
  head_ = head_of(made);
  bool first = true;
  for (const c10::Storage& storage : made.kept) {
    const c10::Device device = storage.device();
    if (!device.is_cpu() && !device.is_cuda()) throw ProtocolError("a storage for a memory file that is not the CPU's or CUDA's");
    if (!first && device != device_) throw ProtocolError("storages of one memory file on two devices");
    device_ = device;
    first = false;
    placed_.emplace_back(storage, file_bytes_);
    file_bytes_ = aligned(file_bytes_ + storage.nbytes());
  }
}

void SplitValues::write_storages(char* file) const {
  if (device_.is_cpu()) {
    for (const auto& [storage, offset] : placed_) {
      if (storage.nbytes() > 0) std::memcpy(file + offset, storage.data(), storage.nbytes());
    }
    return;
  }
  // A kernel on the GPU's compute engine, not a copy (cudaMemcpy may take a copy engine, which
  // can run beside another process's kernel): device_share.h, DeviceMemoryFile.
  const at::TensorOptions bytes = at::TensorOptions().dtype(at::kByte).device(device_);
  for (const auto& [storage, offset] : placed_) {
    if (storage.nbytes() == 0) continue;
    at::Tensor into = at::from_blob(file + offset, {static_cast<int64_t>(storage.nbytes())}, [](void*) {}, bytes);
    at::bitwise_or_out(into, storage_bytes(storage), 0);
  }
  c10::impl::getDeviceGuardImpl(device_.type())->synchronizeDevice(device_.index());
}

MemoryOver memory_over(const std::shared_ptr<MemoryFile>& file) {
  if (!file) throw ProtocolError("values over no memory file");
  return {file->data(), file->bytes(), c10::Device(c10::DeviceType::CPU), file};
}

MemoryOver memory_over(const std::shared_ptr<device_share::DeviceMemoryFile>& file) {
  if (!file) throw ProtocolError("values over no memory file");
  return {file->data(), file->bytes(), file->device(), file};
}

namespace {

// load_values, or with `over` load_values_over: the storages' bytes are then that memory's.
std::vector<c10::IValue> load_values_from(const std::vector<char>& payload, const device_share::Imports* imports,
                                          const MemoryOver* over) {
  // Read as hostile input: every length, index, dtype, device and extent is checked before use.
  const uint64_t table_bytes = get_u64(payload, 0), structure_bytes = get_u64(payload, 8), storage_count = get_u64(payload, 16);
  if (table_bytes > payload.size() || structure_bytes > payload.size() || 24 + table_bytes + structure_bytes > payload.size()) {
    throw ProtocolError("a payload shorter than its table and structure");
  }
  const json table = json_text::parse_or_discarded(std::string_view(payload.data() + 24, table_bytes));
  if (!table.is_object() || !table.contains("storages") || !table.contains("tensors") || !table["storages"].is_array() ||
      !table["tensors"].is_array() || table["storages"].size() != storage_count) {
    throw ProtocolError("a payload whose table is not storages and tensors");
  }
  std::vector<c10::Storage> storages;
  const size_t head_bytes = aligned(24 + table_bytes + structure_bytes);
  size_t at_byte = head_bytes;
  // Shared storages are copied out between two waits for the device: before, so that nothing of
  // this process's still uses the memory they go to; after, so that the worker may reuse its slots.
  bool copied_out = false;
  try {
    for (const json& entry : table["storages"]) {
      const uint64_t bytes = entry.at("bytes").get<uint64_t>();
      const c10::Device device(entry.at("device").get<std::string>());
      if (!device.is_cpu() && !device.is_cuda()) throw ProtocolError("a storage on a device that is not the CPU or CUDA");
      if (entry.contains("shared")) {
        // A device copy in one of the worker's slots: copied here into a tensor of this
        // process's.
        const uint64_t slot = entry.at("shared").get<uint64_t>();
        if (!device.is_cuda() || imports == nullptr) throw ProtocolError("a shared storage where none can be");
        if (bytes > kMaxPayloadBytes) throw ProtocolError("a shared storage over the limit");
        try {
          if (!copied_out) imports->synchronize();
          copied_out = true;
          at::Tensor copy = imports->copy_out(slot, bytes);
          if (copy.device() != device) throw std::runtime_error("a slot on another device than its storage's");
          storages.push_back(copy.storage());
        } catch (const std::runtime_error& error) {
          throw ProtocolError(std::string("a shared storage that cannot be copied out: ") + error.what());
        }
        continue;
      }
      if (over != nullptr) {
        // In the memory, at the same offset past the head as in a whole payload.
        const uint64_t offset = at_byte - head_bytes;
        const c10::Device memory_device = over->device;
        if (device.type() != memory_device.type() || (device.is_cuda() && (device.has_index() ? device.index() : 0) != memory_device.index())) {
          throw ProtocolError("a storage in a memory file of another device");
        }
        if (offset > over->bytes || bytes > over->bytes - offset) throw ProtocolError("a storage beyond the memory file's end");
        std::shared_ptr<const void> owner = over->owner;
        storages.push_back(at::from_blob(over->data + offset, {static_cast<int64_t>(bytes)}, [owner](void*) {},
                                         at::TensorOptions().dtype(at::kByte).device(memory_device))
                               .storage());
        at_byte = aligned(at_byte + bytes);
        continue;
      }
      if (at_byte > payload.size() || bytes > payload.size() - at_byte) throw ProtocolError("a storage beyond the payload's end");
      at::Tensor data = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
      if (bytes > 0) {
        data.copy_(at::from_blob(const_cast<char*>(payload.data()) + at_byte, {static_cast<int64_t>(bytes)}, at::kByte));
      }
      storages.push_back(data.storage());
      at_byte = aligned(at_byte + bytes);
    }
    if (copied_out) imports->synchronize();
    std::vector<at::Tensor> tensors;
    for (const json& entry : table["tensors"]) {
      if (!entry.value("defined", true)) {
        tensors.emplace_back();
        continue;
      }
      const size_t storage = entry.at("storage").get<size_t>();
      if (storage >= storages.size()) throw ProtocolError("a tensor of a storage that is not in the table");
      const int dtype_number = entry.at("dtype").get<int>();
      if (dtype_number < 0 || dtype_number >= static_cast<int>(c10::ScalarType::NumOptions) ||
          dtype_number == static_cast<int>(c10::ScalarType::Undefined)) {
        throw ProtocolError("a tensor of an unknown dtype");
      }
      const auto dtype = static_cast<c10::ScalarType>(dtype_number);
      const int64_t offset = entry.at("offset").get<int64_t>();
      const std::vector<int64_t> sizes = entry.at("sizes").get<std::vector<int64_t>>();
      const std::vector<int64_t> strides = entry.at("strides").get<std::vector<int64_t>>();
      if (sizes.size() != strides.size() || offset < 0) throw ProtocolError("a tensor with a malformed view");
      // The last element it reaches must lie inside its storage (checked without overflow).
      const uint64_t item = c10::elementSize(dtype);
      uint64_t last = static_cast<uint64_t>(offset), elements = 1;
      bool empty = false;
      for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] < 0 || strides[d] < 0 || sizes[d] > (int64_t{1} << 40) || strides[d] > (int64_t{1} << 40)) {
          throw ProtocolError("a tensor with a malformed view");
        }
        empty = empty || sizes[d] == 0;
        // Zero strides reach nothing new, so the extent alone does not bound the count: a view
        // of 2^40 elements over one float would hang every comparison made with it.
        elements = sizes[d] == 0 ? 0 : std::min<uint64_t>(elements * static_cast<uint64_t>(sizes[d]), uint64_t{1} << 50);
        if (sizes[d] > 0) last += static_cast<uint64_t>(sizes[d] - 1) * static_cast<uint64_t>(strides[d]);
        if (last > (uint64_t{1} << 50)) throw ProtocolError("a tensor with a malformed view");
      }
      if (!empty && (last + 1) * item > storages[storage].nbytes()) throw ProtocolError("a tensor that reaches past its storage");
      if (sizes.size() > 64 || elements > (uint64_t{1} << 36)) throw ProtocolError("a tensor with a malformed view");
      at::Tensor tensor = at::empty({0}, at::TensorOptions().dtype(dtype).device(storages[storage].device()))
                              .set_(storages[storage], offset, sizes, strides);
      if (entry.value("requires_grad", false) && at::isFloatingType(dtype)) tensor.set_requires_grad(true);
      tensors.push_back(tensor);
    }
    const c10::IValue loaded = torch::jit::unpickle(payload.data() + 24 + table_bytes, structure_bytes, nullptr, tensors);
    if (!loaded.isTuple()) throw ProtocolError("a payload that is not a tuple");
    const auto& elements = loaded.toTupleRef().elements();
    return std::vector<c10::IValue>(elements.begin(), elements.end());
  } catch (const ProtocolError&) {
    throw;
  } catch (const std::exception& error) {
    throw ProtocolError(std::string("a payload that does not load: ") + error.what());
  }
}

}  // namespace

std::vector<c10::IValue> load_values(const std::vector<char>& payload, const device_share::Imports* imports) {
  return load_values_from(payload, imports, nullptr);
}

std::vector<c10::IValue> load_values_over(const std::vector<char>& head, const MemoryOver& memory) {
  if (memory.data == nullptr || !memory.owner) throw ProtocolError("values over no memory file");
  return load_values_from(head, nullptr, &memory);
}

const std::vector<c10::IValue>& KeptDraws::keep(const std::string& case_key, int draw, const std::vector<c10::IValue>& inputs) {
  if (case_key != case_key_) kept_.clear();
  case_key_ = case_key;
  return kept_[draw] = clone_inputs(inputs);
}

std::optional<std::vector<c10::IValue>> KeptDraws::take(const std::string& case_key, int draw) {
  const auto found = case_key == case_key_ ? kept_.find(draw) : kept_.end();
  if (found == kept_.end()) return std::nullopt;
  std::vector<c10::IValue> inputs = std::move(found->second);
  kept_.erase(found);
  return inputs;
}

void KeptDraws::clear() { kept_.clear(); }

nlohmann::json request_header(const std::string& kind) {
  return {{"schema", kRequestSchema}, {"version", kProtocolVersion}, {"kind", kind}};
}

nlohmann::json response_header() { return {{"schema", kResponseSchema}, {"version", kProtocolVersion}}; }

nlohmann::json call_request(const std::string& kind, const std::string& op_display, const std::string& backend,
                  const c10::OperatorHandle& handle, c10::Device device) {
  nlohmann::json header = request_header(kind);
  header["operator"] = op_display;
  header["backend"] = backend;
  header["schema_name"] = handle.schema().name();
  header["overload"] = handle.schema().overload_name();
  header["device"] = device.str();
  return header;
}

nlohmann::json draw_json(const InputDraw& drawn) {
  nlohmann::json made = {{"arguments", drawn.spec->arguments},
               {"file", drawn.spec->file},
               {"line", drawn.spec->line},
               {"seed", drawn.spec->seed},
               {"draw", drawn.draw},
               {"salt", drawn.salt}};
  if (drawn.timed_next) made["timed_next"] = true;
  return made;
}

void start_cuda_on(c10::Device device) {
  try {
    (void)at::zeros({1}, at::TensorOptions().device(device)).sum().item<float>();
  } catch (const std::exception&) {
  }
}

}  // namespace backendbench::worker
