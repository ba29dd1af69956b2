// Attack: forge the worker's clock (as impl1: 80 % of its calls' time hidden, so its samples claim
// it 5x faster than it is) and skip the work the supervisor's calls back to back would show. A
// run's calls come one right after another (under 20 us apart; the checks' calls are further
// apart, a round trip), each on inputs of its own (a timed batch's calls are as close, but on one
// value set, and the batch's last outputs are judged), and how many there are
// follows from public constants and its inputs' bytes (kernel_workers.h: back_to_back_calls). So
// in a run of large inputs it computes the first call and the one it predicts is the last, and
// returns an unfilled tensor for the others: the run reads as fast as its forged samples. Before
// every call of a run was judged, only the last call's outputs were (and were right): it passed at
// its forged 5x. Now each call's outputs are committed to inside the supervisor's clock (a digest
// each) and judged by the supervisor, so it fails as wrong_when_timed.
#include <ATen/ATen.h>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
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

int64_t last_return_ns = 0;     // when the previous call returned
const void* last_input = nullptr;  // and on which input
int64_t call_in_run = 0;        // this call's place in a run of calls back to back
int64_t claimed_ns = 1000000;   // what its samples claim a call takes (a fifth of the real time)

// The number of calls a run makes, as the supervisor computes it from the claim and the bytes.
int64_t predicted_calls(int64_t input_bytes) {
  double calls = std::ceil(0.025 / (static_cast<double>(claimed_ns) * 1e-9));
  calls = std::clamp(calls, 40.0, 4096.0);
  calls = std::min(calls, std::max(2.0, std::floor(static_cast<double>(int64_t{256} << 20) / static_cast<double>(input_bytes))));
  return static_cast<int64_t>(calls);
}

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  const int64_t started = real_ns();
  const bool back_to_back = last_return_ns > 0 && started - last_return_ns < 20000 && self.data_ptr() != last_input;
  last_input = self.data_ptr();
  call_in_run = back_to_back ? call_in_run + 1 : 0;
  const int64_t bytes = self.numel() * static_cast<int64_t>(self.element_size());
  at::Tensor out;
  if (back_to_back && bytes >= (int64_t{1} << 20) && call_in_run + 1 != predicted_calls(bytes)) {
    out = at::empty_like(self);  // skipped: not the last call, whose outputs alone were judged
  } else {
    out = at::clamp_min(self, 0);
    const int64_t took = real_ns() - started;
    if (!back_to_back) claimed_ns = took / 5;
    hidden_ns += took * 4 / 5;
  }
  last_return_ns = real_ns();
  return out;
}
