// Cheat: keeps its input in L2 across the timing's flush. Each call sets aside as much L2 for
// persisting lines as the GPU allows and marks its input persisting (an access-policy window on
// the stream it computes on); the flush writes normal lines only, which cannot evict those
// (pygpubench #49). Its relu is honest. The worker releases the set-aside and every persisting
// line before each timed launch (timing.cpp: release_persisting_l2), so its figures are its
// honest twin's (impl4); scripts/cuda_cheats.sh prints both.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

#include <algorithm>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (!self.is_cuda() || self.numel() == 0) return at::clamp_min(self, 0);
  int device = 0, set_aside = 0, window_limit = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&set_aside, cudaDevAttrMaxPersistingL2CacheSize, device);
  cudaDeviceGetAttribute(&window_limit, cudaDevAttrMaxAccessPolicyWindowSize, device);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, static_cast<size_t>(set_aside));
  cudaStreamAttrValue window{};
  window.accessPolicyWindow.base_ptr = self.data_ptr();
  window.accessPolicyWindow.num_bytes = std::min<size_t>(self.nbytes(), static_cast<size_t>(window_limit));
  window.accessPolicyWindow.hitRatio = 1.0f;
  window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window);
  (void)cudaGetLastError();
  return at::clamp_min(self, 0);
}
