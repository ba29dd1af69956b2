// Attack (CUDA only): slow the reference in its own worker by less than the bound on it, and the
// supervisor's yardstick after its run. Its relu is honest (clamp_min), and so is every time its
// worker reports of it:
// - at load it registers an observer that, at the start of each aten::relu its process runs (the
//   worker's reference, timed beside it), waits for the GPU's queue, then spins on the host for
//   0.8x the time its own last call took on the GPU (the least of its first three of that size,
//   in the checks), so that the reference's launch comes that much after the GPU went idle: the worker's reference reads 1.8x its time, within the 2x
//   the supervisor's own reference timing allows (kReferenceAgreement), and its paired speedup
//   1.8x its twin's. Its calls back to back are within its claim, which on CUDA ended the bound
//   without the reference's run, so that speedup counted in full. The figure counted is now at
//   most 5 % above the supervisor's own (kernel_workers.h, kCudaCountedReferenceAgreement).
// - once the calls of a run back to back stop coming (its inputs laid over memory the worker was
//   handed, not the caching allocator's; no call for 1 ms) and the last has finished on the GPU,
//   a thread it started at load launches a
//   300 ms spin in a CUDA context of its own, which nothing of its worker's waits for and which
//   the GPU gives time slices beside the supervisor's reference run, slowing it: stopping the
//   worker does not reach it. The supervisor waits for the GPU to be idle before it times the
//   reference (worker_pool.h, gpu_idle_within; 500 ms at most, else the case fails as
//   timing_disagrees), so the spin ends first.
// scripts/cuda_timing_cheats.sh: on the bounded cases it must be counted by the supervisor's
// figures (supervisor_reference_time or back_to_back_time) or fail, within 10 % of its twin.
// Seen on an H100 (2026-12-06): without draining the GPU's queue first, its delay hid behind the
// worker's batched calls (its 16384x8192 reference read 414 us, within 5 % of the supervisor's
// own that run); with it, its bounded cases fail as hidden_work (its worker's host-timed
// readings see the waits) and its short ones as timing_disagrees (its worker's reference at 40 us
// against the supervisor's 12 us on 2048x2048): no gain either way.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>
#include <type_traits>

namespace {

constexpr uint64_t kSpinNanoseconds = uint64_t{300} * 1000 * 1000;
constexpr int64_t kQuietNanoseconds = 1000 * 1000;  // a run's calls come within 20 us of each other
constexpr double kReferenceDelay = 0.8;             // of its own call's time

__global__ void spin(uint64_t nanoseconds) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

struct Driver {
  CUresult (*ctx_create)(CUcontext*, unsigned, CUdevice) = nullptr;  // cuCtxCreate_v2
  CUresult (*ctx_push)(CUcontext) = nullptr;
  CUresult (*ctx_pop)(CUcontext*) = nullptr;
  bool loaded = false;
};

const Driver& driver() {
  static const Driver found = [] {
    Driver d;
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return d;
    bool all = true;
    const auto find = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      all = all && function != nullptr;
    };
    find(d.ctx_create, "cuCtxCreate_v2");
    find(d.ctx_push, "cuCtxPushCurrent_v2");
    find(d.ctx_pop, "cuCtxPopCurrent_v2");
    d.loaded = all;
    return d;
  }();
  return found;
}

// A spin of `nanoseconds` on a stream of this kernel's own context; the launch's error.
int start_spin_elsewhere(uint64_t nanoseconds) {
  static CUcontext context = nullptr;
  static cudaStream_t stream = nullptr;
  if (!driver().loaded) return -1;
  if (context == nullptr) {
    CUcontext previous = nullptr;
    if (driver().ctx_create(&context, 0, 0) != CUDA_SUCCESS) return -2;
    driver().ctx_pop(&previous);  // created current: back to the worker's
  }
  if (driver().ctx_push(context) != CUDA_SUCCESS) return -3;
  if (stream == nullptr) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  spin<<<1, 1, 0, stream>>>(nanoseconds);
  const int error = static_cast<int>(cudaGetLastError());
  CUcontext popped = nullptr;
  driver().ctx_pop(&popped);
  return error;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::atomic<int64_t> last_call_ns{0};   // its own latest call's GPU time, as timed in the checks
std::atomic<int64_t> last_run_call{0};  // steady_clock nanoseconds of its latest call of a run; 0: none
std::atomic<bool> spun{true};           // for the latest run's calls
cudaEvent_t run_done = nullptr;         // recorded after each call of a run, in the worker's context

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
  // The GPU's queue drained first, so that the delay is not hidden behind a call still running
  // (the worker times a batch of calls between its events).
  cudaStreamSynchronize(c10::cuda::getCurrentCUDAStream().stream());
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::nanoseconds(static_cast<int64_t>(kReferenceDelay * static_cast<double>(last_call_ns.load())));
  while (std::chrono::steady_clock::now() < until) {
  }
  return nullptr;
}

const bool started = [] {
  at::addGlobalCallback(at::RecordFunctionCallback(on_operator_start));
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      const int64_t last = last_run_call.load();
      if (last == 0 || spun.load() || now_ns() - last < kQuietNanoseconds) continue;
      spun.store(true);
      cudaEventSynchronize(run_done);  // its own run's work done: the spin slows only what comes next
      if (const int error = start_spin_elsewhere(kSpinNanoseconds); error != 0) {
        std::fprintf(stderr, "relu_implementation_15: the spin did not start (error %d)\n", error);
      }
    }
  }).detach();
  return true;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (!self.is_cuda()) return at::clamp_min(self, 0);
  // A run's inputs lie in memory the worker was handed; the checks' and samples' are the
  // caching allocator's.
  if (self.storage().data_ptr().get_deleter() != c10::cuda::CUDACachingAllocator::get()->raw_deleter()) {
    at::Tensor out = at::clamp_min(self, 0);
    if (run_done == nullptr) cudaEventCreateWithFlags(&run_done, cudaEventDisableTiming);
    cudaEventRecord(run_done, c10::cuda::getCurrentCUDAStream().stream());
    last_run_call.store(now_ns());
    spun.store(false);
    return out;
  }
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
