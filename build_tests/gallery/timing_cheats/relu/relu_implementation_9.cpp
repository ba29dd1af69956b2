// Attack: slow the reference through the allocator. At load it sets its worker's glibc mmap
// threshold back to 128 KiB, undoing the worker's fix_large_allocations, so that every large
// output ATen's reference makes in its worker is a mapping of its own, faulted in afresh on every
// call (a 2048x2048 relu: 4-5 ms instead of 1.1-1.4 ms on the 2-core machine, within the 4x the
// worker's reference figure may read the supervisor's); its own outputs come from blocks it keeps
// and reuses, so it pays no faults. Its values are right. The supervisor's reference, timed in its
// own process whose allocator the kernel cannot reach, and both sides called back to back give
// the true speedup: the back-to-back figures are counted (back_to_back_time), or the case fails.
#include <ATen/ATen.h>

#include <malloc.h>

#include <vector>

namespace {

const bool undone = [] { return mallopt(M_MMAP_THRESHOLD, 128 << 10) == 1; }();

// Blocks handed out before, reused once nobody else holds them.
std::vector<at::Tensor>& kept_blocks() {
  static auto* blocks = new std::vector<at::Tensor>;
  return *blocks;
}

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  (void)undone;
  for (at::Tensor& block : kept_blocks()) {
    if (block.use_count() == 1 && block.sizes() == self.sizes() && block.dtype() == self.dtype() &&
        block.device() == self.device()) {
      return at::clamp_min_out(block, self, 0);
    }
  }
  kept_blocks().push_back(at::empty_like(self, at::MemoryFormat::Contiguous));
  return at::clamp_min_out(kept_blocks().back(), self, 0);
}
