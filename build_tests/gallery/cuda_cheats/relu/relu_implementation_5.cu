// Cheat: an honest relu that leaves the GPU busy after it returns. Each call also queues a
// one-block kernel that spins for 2 ms on a non-blocking stream of its own, which nothing waits
// for: stopping the worker's process (SIGSTOP) does not stop work already queued on the GPU, so
// whatever runs on the GPU next (the supervisor's own reference, timed to bound the kernel's
// figures) shares it with the spin and reads slow, and the kernel's speedup would rise. Its values
// are right, so its correctness entries pass; timed (./bench), every case fails as hidden_work:
// the hidden-work probe waits for the whole device after the call (H200, 2026-12-03, 20 of 20).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

namespace {
__global__ void spin_for(unsigned long long nanoseconds) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

cudaStream_t busy_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t created = nullptr;
    cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
    return created;
  }();
  return stream;
}
}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  at::Tensor output = at::clamp_min(self, 0);
  if (self.is_cuda()) spin_for<<<1, 1, 0, busy_stream()>>>(2'000'000ull);
  return output;
}
