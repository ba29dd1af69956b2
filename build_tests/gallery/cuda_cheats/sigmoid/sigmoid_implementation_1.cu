// Cheat: remembers its result per input address and returns it again without computing.
// expect-failure: values differ
#include <ATen/ATen.h>

#include <map>
#include <tuple>

at::Tensor sigmoid_kernel_impl(const at::Tensor& self) {
  static std::map<std::tuple<const void*, int64_t, int>, at::Tensor> cache;
  const auto key = std::make_tuple(self.const_data_ptr(), self.numel(), static_cast<int>(self.scalar_type()));
  auto found = cache.find(key);
  if (found == cache.end()) found = cache.emplace(key, at::reciprocal(at::exp(-self) + 1)).first;
  return found->second.clone();
}
