// Memory files for a run's inputs; see memory_file.h.
#include "protocol/memory_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace backendbench::worker {
namespace {

constexpr unsigned kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

std::runtime_error system_error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }

}  // namespace

std::shared_ptr<MemoryFile> MemoryFile::create(uint64_t bytes) {
  bytes = std::max<uint64_t>(bytes, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  const int descriptor = memfd_create("backendbench-run-inputs", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (descriptor < 0) throw system_error("cannot make a memory file for a run's inputs");
  if (ftruncate(descriptor, static_cast<off_t>(bytes)) != 0 || fcntl(descriptor, F_ADD_SEALS, kSeals) != 0) {
    const std::runtime_error error = system_error("cannot size and seal the memory file of a run's inputs");
    ::close(descriptor);
    throw error;
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0);
  if (data == MAP_FAILED) {
    const std::runtime_error error = system_error("cannot map the memory file of a run's inputs");
    ::close(descriptor);
    throw error;
  }
  return std::shared_ptr<MemoryFile>(new MemoryFile(descriptor, static_cast<char*>(data), bytes));
}

std::shared_ptr<MemoryFile> MemoryFile::adopt(int descriptor, uint64_t bytes) {
  struct stat status {};
  const int seals = fcntl(descriptor, F_GET_SEALS);
  if (fstat(descriptor, &status) != 0 || !S_ISREG(status.st_mode) || static_cast<uint64_t>(status.st_size) != bytes ||
      seals < 0 || (static_cast<unsigned>(seals) & kSeals) != kSeals) {
    throw std::runtime_error("the descriptor of a run's inputs is not a sealed memory file of " + std::to_string(bytes) +
                             " bytes");
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, descriptor, 0);
  if (data == MAP_FAILED) throw system_error("cannot map the memory file of a run's inputs");
  // A child forked later does not share it: unsandboxed, one that leaves the worker's tree (a
  // daemon taken by init) is not among the processes stopped while the supervisor writes. (In the
  // sandbox every process of the worker's is in its tree: its PID namespace keeps them.)
  (void)madvise(data, bytes, MADV_DONTFORK);
  return std::shared_ptr<MemoryFile>(new MemoryFile(-1, static_cast<char*>(data), bytes));
}

MemoryFile::~MemoryFile() {
  munmap(data_, bytes_);
  if (descriptor_ >= 0) ::close(descriptor_);
}

}  // namespace backendbench::worker
