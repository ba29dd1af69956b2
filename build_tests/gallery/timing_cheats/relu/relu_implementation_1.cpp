// Attack: forge the worker's clock. At load it overwrites the first bytes of libstdc++'s
// std::chrono::steady_clock::now, which the worker's CPU timing reads, with a jump to a clock of
// its own: the real one less 80 % of the time spent in its calls. Its relu is honest, so every
// check passes; its samples claim it 5x faster than it is. The supervisor's clock over its calls
// back to back (kernel_workers.h: bound_from_below) sees the real time: a call that claims 100 us or more
// fails as timing_disagrees, a shorter one is counted by the supervisor's clock (back_to_back_time).
#include <ATen/ATen.h>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace {

std::atomic<int64_t> hidden_ns{0};

int64_t real_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

// steady_clock::time_point is one int64 of nanoseconds, returned in rax.
int64_t forged_now() { return real_ns() - hidden_ns.load(); }

#if defined(__x86_64__)
void jump(void* from, void* to) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(from) & ~(page - 1));
  if (mprotect(start, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
  unsigned char code[12] = {0x48, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xE0};  // movabs rax, to; jmp rax
  std::memcpy(code + 2, &to, sizeof to);
  std::memcpy(from, code, sizeof code);
  mprotect(start, 2 * page, PROT_READ | PROT_EXEC);
}

const bool patched = [] {
  if (void* now = dlsym(RTLD_DEFAULT, "_ZNSt6chrono3_V212steady_clock3nowEv")) jump(now, reinterpret_cast<void*>(&forged_now));
  return true;
}();
#endif

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  const int64_t started = real_ns();
  at::Tensor out = at::clamp_min(self, 0);
  hidden_ns += (real_ns() - started) * 4 / 5;
  return out;
}
