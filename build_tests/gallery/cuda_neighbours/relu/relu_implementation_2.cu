// Neighbour (CUDA only): takes the GPU's memory at load. A right relu (at::clamp_min) that, as its
// library loads, allocates all but 256 MiB of the device's free memory and keeps it for as long
// as its worker runs: a kernel whose worker starts after it, or is timed beside it, would find no
// memory for its CUDA context, the supervisor's probe of its shared path, or its runs' inputs and
// outputs, and fail (or be left a weaker timing bound). The supervisor makes room for the kernel
// it asks (kernel_workers.h, kGpuRoomShare: this worker is ended, and starts again for its own
// cases), so the honest kernel beside it keeps its verdicts and figures.
#ifndef BACKENDBENCH_DEVICE_PART
#include <ATen/ATen.h>
#include <c10/core/CachingDeviceAllocator.h>

#include <cstdint>
#include <vector>

namespace {

constexpr uint64_t kLeft = uint64_t{256} << 20;

const bool taken = [] {
  static auto* held = new std::vector<at::Tensor>;  // never freed: held until the process ends
  try {
    const auto [free, total] = c10::getDeviceAllocator(c10::DeviceType::CUDA)->getMemoryInfo(0);
    for (uint64_t bytes = free > kLeft ? free - kLeft : 0; bytes >= (uint64_t{64} << 20); bytes -= bytes / 8) {
      try {
        held->push_back(at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA)));
        break;
      } catch (const c10::Error&) {
      }
    }
  } catch (const c10::Error&) {
  }
  return !held->empty();
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0); }
#endif
