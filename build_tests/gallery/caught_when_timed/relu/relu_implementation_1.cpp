// Right when checked, wrong when timed: from the 17th call on the same input (same pointer,
// shape, strides and dtype) it returns the answer it remembered instead of computing one. The
// tests call it at most a few times per input, so they pass it; ./bench calls it thousands of
// times and refreshes the input's values between batches, so the remembered answer is stale
// there and the case fails as `wrong_when_timed`.
#include <ATen/ATen.h>

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace {

struct Remembered {
  int calls = 0;
  at::Tensor answer;
};

using InputKey = std::tuple<const void*, std::vector<int64_t>, std::vector<int64_t>, at::ScalarType>;

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  static std::mutex mutex;
  static std::map<InputKey, Remembered> remembered;
  const std::lock_guard<std::mutex> lock(mutex);
  Remembered& entry =
      remembered[InputKey(self.data_ptr(), self.sizes().vec(), self.strides().vec(), self.scalar_type())];
  if (++entry.calls > 16 && entry.answer.defined()) return entry.answer.clone();
  entry.answer = at::clamp_min(self, 0);
  return entry.answer.clone();
}
