// Attack (CUDA only): slow the reference in its own worker on the GPU itself, with no wait on the
// host. Its relu is honest (clamp_min), and so is every time its worker reports of it. At load it
// registers an observer that, at the start of each aten::relu its process runs (the worker's
// reference, timed beside it), launches on the current stream a kernel that spins for 0.8x the
// time its own last call took on the GPU (the least of its first three of that size, in the
// checks). The reference's launch queues behind the spin, inside the worker's events around the
// reference: its worker's reference reads 1.8x its time and its paired speedup 1.8x its twin's,
// within the 2x the supervisor's own reference timing allows (kReferenceAgreement). Its worker's
// host-timed readings see the same spin (nothing waits on the host), so they agree with its
// events: impl15, which waited on the host, was caught by that disagreement (hidden_work), this
// one is not. What bounds it is the supervisor's own reference timing: on calls of 100 us or more
// the reference figure counted is at most 5 % above the supervisor's (kernel_workers.h,
// kCudaCountedReferenceAgreement; flag supervisor_reference_time).
// scripts/cuda_timing_cheats.sh: on the bounded cases it must be counted at the supervisor's
// figures (supervisor_reference_time or back_to_back_time) or fail, within 10 % of its twin.
// Seen on an H100 (2026-12-06): 16384x8192 counted back to back at 1.04x; 8192x8192 passed at
// 1.14x, capped at the supervisor's own reference figure (189 us a call, the workers' honest
// 175 us): since, a capped case is run back to back with the reference's run too. 64x64 (calls
// of 4 us, loosely bounded): 2.23x; 2048x2048 failed as timing_disagrees.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string_view>

namespace {

constexpr double kReferenceDelay = 0.8;  // of its own call's time

__global__ void spin(uint64_t nanoseconds) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

std::atomic<int64_t> last_call_ns{0};  // its own latest call's GPU time, as timed in the checks

// numel -> how many of its calls were timed, and the least GPU nanoseconds of them.
struct Timed {
  int calls = 0;
  int64_t least_ns = 0;
};
constexpr int kTimedCalls = 3;  // the first launch of a size can load the module
std::mutex timed_mutex;
std::map<int64_t, Timed>& timed_sizes() {
  static auto* sizes = new std::map<int64_t, Timed>;  // never destroyed: the process may end mid-call
  return *sizes;
}

std::unique_ptr<at::ObserverContext> on_operator_start(const at::RecordFunction& function) {
  if (function.name() != std::string_view("aten::relu")) return nullptr;
  const int64_t delay = static_cast<int64_t>(kReferenceDelay * static_cast<double>(last_call_ns.load()));
  if (delay > 0) spin<<<1, 1, 0, c10::cuda::getCurrentCUDAStream().stream()>>>(static_cast<uint64_t>(delay));
  return nullptr;
}

const bool started = [] {
  at::addGlobalCallback(at::RecordFunctionCallback(on_operator_start));
  return true;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (!self.is_cuda()) return at::clamp_min(self, 0);
  {
    std::lock_guard<std::mutex> lock(timed_mutex);
    const Timed& timed = timed_sizes()[self.numel()];
    if (timed.calls >= kTimedCalls) {
      last_call_ns.store(timed.least_ns);
      return at::clamp_min(self, 0);
    }
  }
  // The first calls of this size (the checks'): timed on the GPU, waited for.
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  cudaEvent_t before = nullptr, after = nullptr;
  cudaEventCreate(&before);
  cudaEventCreate(&after);
  cudaEventRecord(before, stream);
  at::Tensor out = at::clamp_min(self, 0);
  cudaEventRecord(after, stream);
  cudaEventSynchronize(after);
  float milliseconds = 0;
  cudaEventElapsedTime(&milliseconds, before, after);
  cudaEventDestroy(before);
  cudaEventDestroy(after);
  const auto nanoseconds = static_cast<int64_t>(static_cast<double>(milliseconds) * 1e6);
  std::lock_guard<std::mutex> lock(timed_mutex);
  Timed& timed = timed_sizes()[self.numel()];
  timed.least_ns = timed.calls == 0 ? nanoseconds : std::min(timed.least_ns, nanoseconds);
  ++timed.calls;
  last_call_ns.store(timed.least_ns);
  return out;
}
