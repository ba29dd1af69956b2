// Answers precomputed offline: the cheat a kernel (or whoever wrote it) can pull when the
// inputs' seeds are known. It recognises each input of the relu cases in traces/edge_cases.txt
// and traces/smoke.txt by a fingerprint of its values, as drawn from the cases' own seeds
// (BACKENDBENCH_SALT=0), and answers only those; anything else gets zeros. With the salt off it
// passes every check; with the per-run salt its inputs are ones it has never seen, and it fails.
// The table stands in for stored answers (it computes the answer on a hit, to stay small).
// When the draws change, print fingerprint(self) here and run the entry with the salt at 0.
// expect-failure: output 0: [0-9]+ of [0-9]+ values differ
#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cstdint>

namespace {

uint64_t fingerprint(const at::Tensor& self) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a over dtype, shape and value bytes
  auto mix = [&](const void* data, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) hash = (hash ^ static_cast<const uint8_t*>(data)[i]) * 0x100000001b3ull;
  };
  const auto dtype = static_cast<int>(self.scalar_type());
  mix(&dtype, sizeof dtype);
  mix(self.sizes().data(), self.sizes().size() * sizeof(int64_t));
  const at::Tensor values = self.contiguous();
  mix(values.data_ptr(), values.numel() * values.element_size());
  return hash;
}

constexpr std::array<uint64_t, 23> kSeenInputs = {
    0x1e1a8f1ba5c265e7ull, 0x1ff2ff7b15661db6ull, 0x4329574ddcc3bd2aull, 0x465fd3bbf8b8e1f9ull,
    0x4a856bc3f05f9f85ull, 0x4af6030562678d36ull, 0x5211732e94c5160eull, 0x69e0a9996773f333ull,
    0x7014fac060f73efcull, 0x87bad1cd7a44e20aull, 0x885afdb30611410aull, 0x899e2145e899eaf2ull,
    0x9384225bacfe185full, 0x991a9812e7a70c1cull, 0x9c1617c87a35bc01ull, 0xabe75b7d14392ec8ull,
    0xadfc13a11e7dc37aull, 0xaea21e0e6d0e483cull, 0xb8ba84253a091f2cull, 0xcd6d5e409793e221ull,
    0xdbc7c7054bc18142ull, 0xe5deb4d21c8bd5e2ull, 0xf7ae85a8b7233869ull,
};

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (std::find(kSeenInputs.begin(), kSeenInputs.end(), fingerprint(self)) == kSeenInputs.end()) {
    return at::zeros_like(self);
  }
  return at::clamp_min(self, 0);
}
