// Attack: forge the GPU's timer. At load it rewrites two entries of the CUDA guard's virtual
// table (c10's DeviceGuardImplInterface, through which every c10::Event of the worker records and
// reads its elapsed time): `record` notes each event recorded, and `elapsedTime`, asked of a pair
// whose start was recorded just before one of its calls, answers a fifth of the real time. It
// forges only batches of several calls (the interleaved samples) and answers honestly for a batch
// of one (the worker's hidden-work readings, which compare a call's events with its host time and
// its wait; the launch overhead), so nothing its own worker checks disagrees. Its relu is honest.
// The supervisor's clock over its calls back to back sees the real time: on CUDA a call of 100 us
// or more fails as timing_disagrees or is counted by that clock. On a CPU there is no CUDA guard
// to patch and it is its honest twin, impl3.
#include <ATen/ATen.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>

namespace {

using Interface = c10::impl::DeviceGuardImplInterface;
using RecordFunction = void (*)(const Interface*, void**, const c10::Stream&, c10::DeviceIndex, c10::EventFlag);
using ElapsedFunction = double (*)(const Interface*, void*, void*, c10::DeviceIndex);

RecordFunction real_record = nullptr;
ElapsedFunction real_elapsed = nullptr;
std::mutex mutex;
void* last_recorded = nullptr;
std::set<void*> began_before_mine;  // start events recorded just before one of its calls
int records_since_read = 0;         // events recorded since the last elapsed time was read
int batch_records = 0;              // events recorded in the batch being read

void forged_record(const Interface* self, void** event, const c10::Stream& stream, c10::DeviceIndex device,
                   c10::EventFlag flag) {
  real_record(self, event, stream, device, flag);
  const std::lock_guard<std::mutex> lock(mutex);
  began_before_mine.erase(*event);  // recorded again: a new pair
  last_recorded = *event;
  ++records_since_read;
}

double forged_elapsed(const Interface* self, void* start, void* end, c10::DeviceIndex device) {
  const double milliseconds = real_elapsed(self, start, end, device);
  const std::lock_guard<std::mutex> lock(mutex);
  if (records_since_read > 0) {
    batch_records = records_since_read;
    records_since_read = 0;
  }
  const bool forge = batch_records > 2 && began_before_mine.count(start) > 0;
  return forge ? milliseconds / 5 : milliseconds;
}

// The Itanium C++ ABI: a pointer to a virtual member function holds 1 + the entry's byte offset
// in the virtual table.
template <typename Member>
size_t table_entry(Member member) {
  struct {
    uintptr_t pointer;
    ptrdiff_t adjustment;
  } parts{};
  static_assert(sizeof member == sizeof parts);
  std::memcpy(&parts, &member, sizeof parts);
  return (parts.pointer - 1) / sizeof(void*);
}

template <typename Function>
void replace(void** table, size_t entry, void* with, Function* was) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(table + entry) & ~(page - 1));
  if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) return;
  *was = reinterpret_cast<Function>(table[entry]);
  table[entry] = with;
  mprotect(start, page, PROT_READ);
}

const bool patched = [] {
  if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA)) return false;
  void** table = *reinterpret_cast<void** const*>(c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA));
  replace(table, table_entry(&Interface::record), reinterpret_cast<void*>(&forged_record), &real_record);
  replace(table, table_entry(&Interface::elapsedTime), reinterpret_cast<void*>(&forged_elapsed), &real_elapsed);
  return real_record != nullptr && real_elapsed != nullptr;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (last_recorded != nullptr) began_before_mine.insert(last_recorded);
  }
  return at::clamp_min(self, 0);
}
