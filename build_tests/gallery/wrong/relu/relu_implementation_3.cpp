// Wrong: caches its first result per shape and dtype, as a memoising kernel might; correct on
// the first call, stale on every later input of the same shape.
// expect-failure: \(draw 2 of 2\).*values differ beyond
#include <ATen/ATen.h>

#include <map>
#include <string>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  static std::map<std::string, at::Tensor> cache;
  const std::string key = self.sizes().vec().empty() ? std::string(c10::toString(self.scalar_type()))
                                                     : std::string(c10::toString(self.scalar_type())) + c10::str(self.sizes());
  auto found = cache.find(key);
  if (found == cache.end()) found = cache.emplace(key, at::clamp_min(self, 0)).first;
  return found->second.clone();
}
