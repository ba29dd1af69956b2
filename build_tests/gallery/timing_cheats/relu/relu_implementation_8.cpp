// Cheat: an output cache keyed on a fingerprint of the input (flashinfer-bench-starter-kit #21;
// "compute once, replay", tensara #238). The first call on given values computes the relu and
// keeps it; a later call on values with the same fingerprint (shape, dtype and 64 elements read
// at fixed places) returns the kept tensor without reading the rest. Every output it returns is
// right for its input, so no check of values fails it: the checks' draws are the values timed
// next, and every timed call after the first of each value set is a lookup. The supervisor's
// calls back to back give each call a draw of its own that the kernel never saw, so there it
// pays for every relu: its speedup fails as timing_disagrees or is counted by the supervisor's
// clock (gallery_timing_cheats, timing_cheats.py).
#include <ATen/ATen.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

std::string fingerprint(const at::Tensor& self) {
  std::string key = std::string(c10::toString(self.scalar_type())) + ":";
  for (int64_t size : self.sizes()) key += std::to_string(size) + ",";
  const at::Tensor flat = self.contiguous().reshape({-1});
  const int64_t n = flat.numel();
  const auto* bytes = static_cast<const char*>(flat.data_ptr());
  const int64_t width = static_cast<int64_t>(flat.element_size());
  for (int64_t i = 0; i < 64 && n > 0; ++i) {
    const int64_t at = (i * 7919 + 13) % n;
    key.append(bytes + at * width, static_cast<size_t>(width));
  }
  return key;
}

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  static std::mutex mutex;
  static std::map<std::string, at::Tensor> kept;
  const std::string key = fingerprint(self);
  std::lock_guard<std::mutex> lock(mutex);
  auto found = kept.find(key);
  if (found != kept.end()) return found->second;
  at::Tensor out = at::clamp_min(self, 0);
  if (kept.size() >= 64) kept.clear();  // the newest values are those timed next
  kept.emplace(key, out);
  return out;
}
