// Neighbour (CUDA only): keeps a kernel spinning on the GPU while it is not called. A right relu
// (at::clamp_min) whose library starts a thread at load that keeps one spin of 5 s queued on a
// stream of its own, one after another, until the kernel is first called (so that its own calls
// wait for one spin at most): while other kernels are checked and timed, nothing of its worker's
// waits for them, stopping its worker (SIGSTOP) does not stop them, and without MPS the GPU gives
// its context time slices beside any other process's kernels, the one timed among them. The
// supervisor locks every other GPU worker's processes while it asks one (kernel_workers.h: the
// driver's lock, under which a process's CUDA calls wait), from the moment it first asks another,
// so no spin of this one's is launched beside another kernel's calls; one it had left running
// when it was to be locked would make the lock fail, and its worker would be ended. Its own
// checks wait for its spin (scripts/cuda_neighbours.sh shows that it ran).
#include <cstdint>

// The one call between the two parts: waits for the last spin, then queues another on a stream of
// its own. Returns the launch's error.
int start_spin(uint64_t nanoseconds);

#ifdef BACKENDBENCH_DEVICE_PART

#include <cuda_runtime.h>

namespace {

__global__ void spin(uint64_t nanoseconds) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

}  // namespace

int start_spin(uint64_t nanoseconds) {
  static cudaStream_t stream = nullptr;
  if (stream == nullptr) {
    const cudaError_t made = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (made != cudaSuccess) return static_cast<int>(made);
  }
  (void)cudaStreamSynchronize(stream);
  spin<<<1, 1, 0, stream>>>(nanoseconds);
  return static_cast<int>(cudaGetLastError());
}

#else  // the host part: C++, with ATen

#include <ATen/ATen.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

std::atomic<bool> called{false};

// From a thread, once the library's initialisers (the device part's registration among them) ran.
const bool started = [] {
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    while (!called.load()) {
      if (const int error = start_spin(uint64_t{5000} * 1000 * 1000); error != 0) {
        std::fprintf(stderr, "relu_implementation_3: the spin did not start (CUDA error %d)\n", error);
        return;
      }
    }
  }).detach();
  return true;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  called.store(true);
  return at::clamp_min(self, 0);
}

#endif
