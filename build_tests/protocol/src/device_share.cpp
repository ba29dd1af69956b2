// CUDA memory handed between processes as file descriptors (device_share.h).
#include "protocol/device_share.h"

#include <dlfcn.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#if __has_include(<cuda.h>)
#include <cuda.h>
#define BACKENDBENCH_DEVICE_SHARE 1
#endif

namespace backendbench::device_share {

Descriptors& Descriptors::operator=(Descriptors&& other) noexcept {
  if (this != &other) {
    for (const int fd : descriptors_) ::close(fd);
    descriptors_ = std::move(other.descriptors_);
    other.descriptors_.clear();
  }
  return *this;
}

Descriptors::~Descriptors() {
  for (const int fd : descriptors_) ::close(fd);
}

void send_descriptors(int socket, const std::vector<int>& descriptors) {
  if (descriptors.empty()) return;
  if (descriptors.size() > kMaxDescriptors) throw std::runtime_error("too many descriptors for one message");
  char byte = 'd';
  iovec data{&byte, 1};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * descriptors.size()));
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int) * descriptors.size());
  std::memcpy(CMSG_DATA(header), descriptors.data(), sizeof(int) * descriptors.size());
  ssize_t sent;
  do {
    sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != 1) throw std::runtime_error(std::string("cannot send descriptors: ") + std::strerror(errno));
}

std::vector<int> receive_descriptors(int socket, size_t count, int timeout_ms) {
  if (count == 0) return {};
  if (count > kMaxDescriptors) throw std::runtime_error("a message that claims more than " + std::to_string(kMaxDescriptors) + " descriptors");
  pollfd ready{socket, POLLIN, 0};
  int polled;
  do {
    polled = ::poll(&ready, 1, timeout_ms);
  } while (polled < 0 && errno == EINTR);
  if (polled <= 0) throw std::runtime_error("the descriptors its message announced did not come");
  char byte = 0;
  iovec data{&byte, 1};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kMaxDescriptors));
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  ssize_t got;
  do {
    got = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  if (got < 0) throw std::runtime_error(std::string("cannot receive descriptors: ") + std::strerror(errno));
  std::vector<int> descriptors;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const size_t at = descriptors.size();
    descriptors.resize(at + n);
    std::memcpy(descriptors.data() + at, CMSG_DATA(header), n * sizeof(int));
  }
  if ((message.msg_flags & MSG_CTRUNC) != 0 || descriptors.size() != count) {
    for (const int fd : descriptors) ::close(fd);
    throw std::runtime_error("its message announced " + std::to_string(count) + " descriptors and " +
                             std::to_string(descriptors.size()) + " came");
  }
  return descriptors;
}

bool holds_device_file(pid_t pid, const std::string& prefix) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::error_code error;
  std::filesystem::directory_iterator descriptors(proc + "/fd", error);
  // Unreadable (a process can make itself undumpable) tells nothing: taken as holding it, unless
  // the process has ended.
  if (error) return std::filesystem::exists(proc);
  for (const auto& entry : descriptors) {
    std::error_code unreadable;
    const std::filesystem::path target = std::filesystem::read_symlink(entry.path(), unreadable);
    if (!unreadable && target.string().rfind(prefix, 0) == 0) return true;
  }
  // A mapping outlives its descriptor: a process can close the file and keep using what it mapped.
  std::ifstream maps(proc + "/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t path = line.find('/');
    if (path != std::string::npos && line.compare(path, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

#ifdef BACKENDBENCH_DEVICE_SHARE

namespace {

#define BACKENDBENCH_NAME_OF(f) BACKENDBENCH_NAME_TEXT(f)
#define BACKENDBENCH_NAME_TEXT(f) #f

// libcuda's functions, looked up once (the process has it loaded when it uses CUDA).
struct Driver {
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemAddressFree) address_free = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) import_handle = nullptr;
  decltype(&::cuMemcpyDtoD) copy = nullptr;
  decltype(&::cuCtxSynchronize) synchronize = nullptr;
  bool loaded = false;
  // The checkpoint lock (drivers of CUDA 12.8 on): optional, ProcessLocks::available() says.
  decltype(&::cuCheckpointProcessGetState) process_state = nullptr;
  decltype(&::cuCheckpointProcessLock) lock_process = nullptr;
  decltype(&::cuCheckpointProcessUnlock) unlock_process = nullptr;
  bool locks = false;
};

const Driver& driver() {
  static const Driver loaded = [] {
    Driver d;
    void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return d;
    bool all = true;
    const auto find = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(::dlsym(library, name));
      all = all && function != nullptr;
    };
    find(d.device_get_attribute, BACKENDBENCH_NAME_OF(cuDeviceGetAttribute));
    find(d.granularity, BACKENDBENCH_NAME_OF(cuMemGetAllocationGranularity));
    find(d.create, BACKENDBENCH_NAME_OF(cuMemCreate));
    find(d.release, BACKENDBENCH_NAME_OF(cuMemRelease));
    find(d.reserve, BACKENDBENCH_NAME_OF(cuMemAddressReserve));
    find(d.address_free, BACKENDBENCH_NAME_OF(cuMemAddressFree));
    find(d.map, BACKENDBENCH_NAME_OF(cuMemMap));
    find(d.unmap, BACKENDBENCH_NAME_OF(cuMemUnmap));
    find(d.set_access, BACKENDBENCH_NAME_OF(cuMemSetAccess));
    find(d.export_handle, BACKENDBENCH_NAME_OF(cuMemExportToShareableHandle));
    find(d.import_handle, BACKENDBENCH_NAME_OF(cuMemImportFromShareableHandle));
    find(d.copy, BACKENDBENCH_NAME_OF(cuMemcpyDtoD));
    find(d.synchronize, BACKENDBENCH_NAME_OF(cuCtxSynchronize));
    d.loaded = all;
    find(d.process_state, BACKENDBENCH_NAME_OF(cuCheckpointProcessGetState));
    find(d.lock_process, BACKENDBENCH_NAME_OF(cuCheckpointProcessLock));
    find(d.unlock_process, BACKENDBENCH_NAME_OF(cuCheckpointProcessUnlock));
    d.locks = all;
    return d;
  }();
  return loaded;
}

void check(CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) throw std::runtime_error(std::string(what) + " failed (CUDA driver error " + std::to_string(result) + ")");
}

CUmemAllocationProp properties(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

size_t rounded_size(uint64_t bytes, int device) {
  const CUmemAllocationProp prop = properties(device);
  size_t granularity = 0;
  check(driver().granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
  if (granularity == 0) granularity = size_t{2} << 20;
  return static_cast<size_t>((bytes + granularity - 1) / granularity * granularity);
}

}  // namespace

// An allocation mapped into this process: unmapped and released when it goes. Outside the
// anonymous namespace because the slots' pimpl types (Exports::Slot, Imports::Slot) hold one, which
// GCC warns about (-Wsubobject-linkage) once this file is part of a unity file.
struct Mapping {
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr address = 0;
  size_t size = 0;
  bool mapped = false;
  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (mapped) (void)driver().unmap(address, size);
    if (address != 0) (void)driver().address_free(address, size);
    if (handle != 0) (void)driver().release(handle);
  }
  void map(int device, CUmemAccess_flags flags) {
    check(driver().reserve(&address, size, 0, 0, 0), "cuMemAddressReserve");
    check(driver().map(address, size, 0, handle, 0), "cuMemMap");
    mapped = true;
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = flags;
    check(driver().set_access(address, size, &access, 1), "cuMemSetAccess");
  }
};

bool available(c10::Device device) {
  if (!device.is_cuda() || !driver().loaded) return false;
  static std::mutex mutex;
  static std::map<int, bool>* known = new std::map<int, bool>;
  std::lock_guard<std::mutex> lock(mutex);
  const int index = device.has_index() ? device.index() : 0;
  if (const auto it = known->find(index); it != known->end()) return it->second;
  int vmm = 0, posix = 0;
  const bool ok = driver().device_get_attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, index) == CUDA_SUCCESS &&
                  driver().device_get_attribute(&posix, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, index) ==
                      CUDA_SUCCESS &&
                  vmm != 0 && posix != 0;
  (*known)[index] = ok;
  return ok;
}

bool one_process_at_a_time(c10::Device device) {
  if (!device.is_cuda() || !driver().loaded) return false;
  int shared_by_mps = 1;
  // A driver that does not know the attribute (before CUDA 12.x) is taken to share.
  return driver().device_get_attribute(&shared_by_mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, device.has_index() ? device.index() : 0) ==
             CUDA_SUCCESS &&
         shared_by_mps == 0;
}

// Worker side.

struct Exports::Slot {
  uint64_t id = 0;
  Mapping mapping;
  int descriptor = -1;
  bool in_use = false, announced = false;
  ~Slot() {
    if (descriptor >= 0) ::close(descriptor);
  }
};

Exports::Exports(uint64_t limit_bytes) : limit_bytes_(limit_bytes) {}

Exports::~Exports() {
  // The driver may be gone at exit: slots are left to the process's end then.
  for (auto& slot : slots_) (void)slot.release();
}

uint64_t Exports::place(const at::Tensor& bytes) {
  if (!bytes.is_cuda() || !bytes.is_contiguous() || bytes.scalar_type() != at::kByte) {
    throw std::runtime_error("Exports::place expects a contiguous CUDA byte tensor");
  }
  const int device = bytes.device().index();
  const uint64_t needed = static_cast<uint64_t>(bytes.numel());
  // The smallest free slot it fits in.
  Slot* chosen = nullptr;
  for (auto& slot : slots_) {
    if (!slot->in_use && slot->mapping.size >= needed && (chosen == nullptr || slot->mapping.size < chosen->mapping.size)) {
      chosen = slot.get();
    }
  }
  if (chosen == nullptr) {
    // One message carries at most kMaxDescriptors: past that, the storage goes in the payload.
    if (std::count_if(slots_.begin(), slots_.end(), [](const auto& slot) { return !slot->announced; }) >=
        static_cast<std::ptrdiff_t>(kMaxDescriptors)) {
      throw std::runtime_error("too many new slots for one message");
    }
    // A new one, a power of two so that later storages of about this size fit it; free slots
    // go first (largest first) while the total would pass the limit.
    size_t size = rounded_size(needed, device);
    if (size < (size_t{1} << 40)) {
      size_t power = size_t{2} << 20;
      while (power < size) power <<= 1;
      size = rounded_size(power, device);
    }
    uint64_t total = size;
    for (const auto& slot : slots_) total += slot->mapping.size;
    while (total > limit_bytes_) {
      auto largest = slots_.end();
      for (auto it = slots_.begin(); it != slots_.end(); ++it) {
        if (!(*it)->in_use && (largest == slots_.end() || (*it)->mapping.size > (*largest)->mapping.size)) largest = it;
      }
      if (largest == slots_.end()) break;  // every slot holds this answer: over the limit until the next
      total -= (*largest)->mapping.size;
      if ((*largest)->announced) retired_.push_back((*largest)->id);
      slots_.erase(largest);
    }
    auto slot = std::make_unique<Slot>();
    slot->id = next_id_++;
    slot->mapping.size = size;
    const CUmemAllocationProp prop = properties(device);
    check(driver().create(&slot->mapping.handle, size, &prop, 0), "cuMemCreate");
    slot->mapping.map(device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    check(driver().export_handle(&slot->descriptor, slot->mapping.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemExportToShareableHandle");
    chosen = slot.get();
    slots_.push_back(std::move(slot));
  }
  // The bytes are final: whatever wrote them (on any stream) has finished. Once an answer: its
  // copies into slots are queued after that wait, and finish() waits for them.
  if (!synchronized_) check(driver().synchronize(), "cuCtxSynchronize");
  synchronized_ = true;
  check(driver().copy(chosen->mapping.address, reinterpret_cast<CUdeviceptr>(bytes.data_ptr()), static_cast<size_t>(needed)),
        "cuMemcpyDtoD");
  chosen->in_use = true;
  return chosen->id;
}

Exports::Changes Exports::finish() {
  if (std::any_of(slots_.begin(), slots_.end(), [](const auto& slot) { return slot->in_use; })) {
    check(driver().synchronize(), "cuCtxSynchronize");
  }
  synchronized_ = false;  // the next answer's storages are waited for again (another draw's call wrote them)
  Changes changes;
  changes.retired = retired_;
  for (const auto& slot : slots_) {
    if (slot->announced) continue;
    changes.new_slots.push_back(slot->id);
    changes.new_sizes.push_back(slot->mapping.size);
    changes.descriptors.push_back(slot->descriptor);
  }
  return changes;
}

void Exports::sent(const Changes& changes) {
  for (auto& slot : slots_) {
    if (std::find(changes.new_slots.begin(), changes.new_slots.end(), slot->id) != changes.new_slots.end()) slot->announced = true;
  }
  std::vector<uint64_t> left;
  for (const uint64_t id : retired_) {
    if (std::find(changes.retired.begin(), changes.retired.end(), id) == changes.retired.end()) left.push_back(id);
  }
  retired_ = left;
}

void Exports::reuse() {
  for (auto& slot : slots_) slot->in_use = false;
  synchronized_ = false;
}

// Supervisor side.

struct Imports::Slot {
  Mapping mapping;
  int device = 0;
};

Imports::Imports() = default;
Imports::~Imports() = default;

void Imports::adopt(uint64_t slot, int descriptor, uint64_t bytes, c10::Device device) {
  if (!available(device)) throw std::runtime_error("device memory cannot be shared on " + device.str());
  if (slots_.count(slot) > 0) throw std::runtime_error("slot " + std::to_string(slot) + " announced twice");
  if (slots_.size() >= kMaxSlots) throw std::runtime_error("more than " + std::to_string(kMaxSlots) + " slots");
  const int index = device.has_index() ? device.index() : 0;
  auto imported = std::make_unique<Slot>();
  imported->device = index;
  check(driver().import_handle(&imported->mapping.handle, reinterpret_cast<void*>(static_cast<uintptr_t>(descriptor)),
                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        "cuMemImportFromShareableHandle");
  imported->mapping.size = rounded_size(bytes, index);
  // Mapping more than the allocation holds fails here: a size is only the worker's claim.
  imported->mapping.map(index, CU_MEM_ACCESS_FLAGS_PROT_READ);
  slots_[slot] = std::move(imported);
}

void Imports::retire(uint64_t slot) {
  if (slots_.erase(slot) == 0) throw std::runtime_error("slot " + std::to_string(slot) + " retired but never announced");
}

at::Tensor Imports::copy_out(uint64_t slot, uint64_t bytes) const {
  const auto found = slots_.find(slot);
  if (found == slots_.end()) throw std::runtime_error("slot " + std::to_string(slot) + " was never announced");
  if (bytes > found->second->mapping.size) {
    throw std::runtime_error("a storage of " + std::to_string(bytes) + " bytes in slot " + std::to_string(slot) + " of " +
                             std::to_string(found->second->mapping.size));
  }
  const c10::Device device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(found->second->device));
  at::Tensor copy = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
  check(driver().copy(reinterpret_cast<CUdeviceptr>(copy.data_ptr()), found->second->mapping.address, static_cast<size_t>(bytes)),
        "cuMemcpyDtoD");
  return copy;
}

void Imports::synchronize() const { check(driver().synchronize(), "cuCtxSynchronize"); }

void Imports::clear() { slots_.clear(); }

// A run's inputs in device memory.

struct DeviceMemoryFile::Allocation {
  Mapping mapping;
};

DeviceMemoryFile::DeviceMemoryFile(std::unique_ptr<Allocation> allocation, uint64_t bytes, c10::Device device, int descriptor)
    : allocation_(std::move(allocation)), bytes_(bytes), device_(device), descriptor_(descriptor) {}

DeviceMemoryFile::~DeviceMemoryFile() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

char* DeviceMemoryFile::data() const { return reinterpret_cast<char*>(static_cast<uintptr_t>(allocation_->mapping.address)); }

std::shared_ptr<DeviceMemoryFile> DeviceMemoryFile::create(uint64_t bytes, c10::Device device) {
  if (!available(device)) throw std::runtime_error("device memory cannot be shared on " + device.str());
  const int index = device.has_index() ? device.index() : 0;
  auto allocation = std::make_unique<Allocation>();
  allocation->mapping.size = rounded_size(std::max<uint64_t>(bytes, 1), index);
  const CUmemAllocationProp prop = properties(index);
  check(driver().create(&allocation->mapping.handle, allocation->mapping.size, &prop, 0), "cuMemCreate");
  allocation->mapping.map(index, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  int descriptor = -1;
  check(driver().export_handle(&descriptor, allocation->mapping.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        "cuMemExportToShareableHandle");
  return std::shared_ptr<DeviceMemoryFile>(
      new DeviceMemoryFile(std::move(allocation), bytes, c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)),
                           descriptor));
}

std::shared_ptr<DeviceMemoryFile> DeviceMemoryFile::adopt(int descriptor, uint64_t bytes, c10::Device device) {
  if (!available(device)) throw std::runtime_error("device memory cannot be shared on " + device.str());
  const int index = device.has_index() ? device.index() : 0;
  auto allocation = std::make_unique<Allocation>();
  check(driver().import_handle(&allocation->mapping.handle, reinterpret_cast<void*>(static_cast<uintptr_t>(descriptor)),
                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        "cuMemImportFromShareableHandle");
  allocation->mapping.size = rounded_size(std::max<uint64_t>(bytes, 1), index);
  // Mapping more than the allocation holds fails here: the size is only the request's claim.
  allocation->mapping.map(index, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  return std::shared_ptr<DeviceMemoryFile>(
      new DeviceMemoryFile(std::move(allocation), bytes, c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)), -1));
}

// Other processes' CUDA work held still.

bool ProcessLocks::available() { return driver().locks; }

ProcessLocks::ProcessLocks(const std::vector<pid_t>& pids, int timeout_ms) {
  if (!available()) {
    error_ = "this machine's CUDA driver cannot lock processes (cuCheckpointProcessLock)";
    return;
  }
  for (const pid_t pid : pids) {
    CUprocessState state{};
    // A process that has not initialised CUDA (bubblewrap, its first process) has no state. One
    // that holds the GPU's device files and still reports none (a kernel can silence the driver's
    // thread in its own process) cannot be vouched for.
    if (driver().process_state(static_cast<int>(pid), &state) != CUDA_SUCCESS) {
      if (!holds_device_file(pid, kGpuDeviceFiles)) continue;
      error_ = "process " + std::to_string(pid) + " holds the GPU (" + kGpuDeviceFiles +
               "*) but the CUDA driver reports no state of it";
      return;
    }
    if (state != CU_PROCESS_STATE_RUNNING) {
      error_ = "process " + std::to_string(pid) + " is not running CUDA normally (checkpoint state " +
               std::to_string(static_cast<int>(state)) + ")";
      return;
    }
    CUcheckpointLockArgs args{};
    args.timeoutMs = static_cast<unsigned int>(std::max(timeout_ms, 1));
    const CUresult result = driver().lock_process(static_cast<int>(pid), &args);
    if (result == CUDA_SUCCESS) {
      locked_.push_back(pid);
      continue;
    }
    work_left_ = result == CUDA_ERROR_NOT_READY || result == CUDA_ERROR_TIMEOUT;
    error_ = work_left_ ? "work of process " + std::to_string(pid) + " was still on the GPU after " +
                              std::to_string(timeout_ms) + " ms"
                        : "process " + std::to_string(pid) + " could not be locked (CUDA driver error " +
                              std::to_string(result) + ")";
    return;
  }
  if (locked_.empty()) {
    error_ = "none of the processes uses CUDA";
    none_use_cuda_ = true;
  }
}

ProcessLocks::~ProcessLocks() {
  for (const pid_t pid : locked_) (void)driver().unlock_process(static_cast<int>(pid), nullptr);
}

void ProcessLocks::unlock() {
  std::vector<pid_t> locked;
  locked.swap(locked_);
  std::string refused;
  for (const pid_t pid : locked) {
    const CUresult result = driver().unlock_process(static_cast<int>(pid), nullptr);
    if (result != CUDA_SUCCESS && refused.empty()) {
      refused = "process " + std::to_string(pid) + " could not be unlocked (CUDA driver error " + std::to_string(result) + ")";
    }
  }
  if (!refused.empty()) throw std::runtime_error(refused);
}

#else  // no CUDA headers: nothing is shared

bool available(c10::Device) { return false; }
bool one_process_at_a_time(c10::Device) { return false; }
struct Exports::Slot {};
Exports::Exports(uint64_t limit_bytes) : limit_bytes_(limit_bytes) {}
Exports::~Exports() = default;
uint64_t Exports::place(const at::Tensor&) { throw std::runtime_error("this build cannot share device memory"); }
Exports::Changes Exports::finish() { return {}; }
void Exports::sent(const Changes&) {}
void Exports::reuse() {}
struct Imports::Slot {};
Imports::Imports() = default;
Imports::~Imports() = default;
void Imports::adopt(uint64_t, int, uint64_t, c10::Device) { throw std::runtime_error("this build cannot share device memory"); }
void Imports::retire(uint64_t slot) { throw std::runtime_error("slot " + std::to_string(slot) + " retired but never announced"); }
at::Tensor Imports::copy_out(uint64_t slot, uint64_t) const { throw std::runtime_error("slot " + std::to_string(slot) + " was never announced"); }
void Imports::synchronize() const {}
void Imports::clear() {}
struct DeviceMemoryFile::Allocation {};
DeviceMemoryFile::DeviceMemoryFile(std::unique_ptr<Allocation> allocation, uint64_t bytes, c10::Device device, int descriptor)
    : allocation_(std::move(allocation)), bytes_(bytes), device_(device), descriptor_(descriptor) {}
DeviceMemoryFile::~DeviceMemoryFile() = default;
char* DeviceMemoryFile::data() const { return nullptr; }
std::shared_ptr<DeviceMemoryFile> DeviceMemoryFile::create(uint64_t, c10::Device) {
  throw std::runtime_error("this build cannot share device memory");
}
std::shared_ptr<DeviceMemoryFile> DeviceMemoryFile::adopt(int, uint64_t, c10::Device) {
  throw std::runtime_error("this build cannot share device memory");
}

bool ProcessLocks::available() { return false; }
ProcessLocks::ProcessLocks(const std::vector<pid_t>&, int) : error_("this build cannot lock CUDA processes") {}
ProcessLocks::~ProcessLocks() = default;
void ProcessLocks::unlock() {}
#endif

}  // namespace backendbench::device_share
