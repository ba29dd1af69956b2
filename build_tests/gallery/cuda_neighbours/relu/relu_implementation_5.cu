// Neighbour (CUDA only): leaves work on the GPU after its turn. A right relu (at::clamp_min) that,
// on each call, queues a 3 s spin in a CUDA context of its own where none of its runs yet, so
// that nothing of its worker's waits for it (its own timing may fail for it: said, not judged):
// when the supervisor turns to the next kernel, the spin is still there. The supervisor ends
// this worker before the next kernel goes on, which ends its work on the GPU: the driver's lock
// on its processes waits for their work on the GPU and is refused after 500 ms (seen on an H100,
// 2026-12-06: "work of process ... was still on the GPU after 500 ms"), and where a lock is
// taken over a kernel left running, the GPU is found busy after its turn (worker_pool.h,
// gpu_busy_now: "work of its kept the GPU busy after its turn"). The kernel beside it keeps its
// figures.
#include <ATen/ATen.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

namespace {

constexpr uint64_t kSpinNanoseconds = uint64_t{3000} * 1000 * 1000;

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

// A spin on a stream of this kernel's own context, unless its last one still runs.
void keep_spinning() {
  static CUcontext context = nullptr;
  static cudaStream_t stream = nullptr;
  static cudaEvent_t done = nullptr;
  if (!driver().loaded) return;
  if (context == nullptr) {
    CUcontext previous = nullptr;
    if (driver().ctx_create(&context, 0, 0) != CUDA_SUCCESS) return;
    driver().ctx_pop(&previous);  // created current: back to the worker's
  }
  if (driver().ctx_push(context) != CUDA_SUCCESS) return;
  if (stream == nullptr) {
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  } else if (cudaEventQuery(done) == cudaErrorNotReady) {
    CUcontext popped = nullptr;
    driver().ctx_pop(&popped);
    return;
  }
  spin<<<1, 1, 0, stream>>>(kSpinNanoseconds);
  cudaEventRecord(done, stream);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) {
    std::fprintf(stderr, "relu_implementation_5: the spin did not start (%s)\n", cudaGetErrorString(error));
  }
  CUcontext popped = nullptr;
  driver().ctx_pop(&popped);
}

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  keep_spinning();
  return at::clamp_min(self, 0);
}
