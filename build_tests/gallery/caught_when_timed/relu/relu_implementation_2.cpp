// Right when checked, wrong when timed, and its own process's reference made to agree: like
// impl1 it returns a remembered answer from the 17th call on the same input, and at load it
// registers an aten::relu of its own on the CPU that returns that same remembered answer for an
// input it remembers, so a comparison made in its worker (the reference computed beside it)
// sees the stale answer twice and agrees. Its timed outputs are judged by the supervisor, with
// the supervisor's own reference: ./bench fails it as `wrong_when_timed`.
#include <ATen/ATen.h>
#include <torch/library.h>

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

std::mutex& mutex() {
  static std::mutex m;
  return m;
}

std::map<InputKey, Remembered>& remembered() {
  static auto* entries = new std::map<InputKey, Remembered>;
  return *entries;
}

InputKey key_of(const at::Tensor& self) {
  return InputKey(self.data_ptr(), self.sizes().vec(), self.strides().vec(), self.scalar_type());
}

// The process's aten::relu: the remembered answer where there is one.
at::Tensor agreeing_relu(const at::Tensor& self) {
  {
    const std::lock_guard<std::mutex> lock(mutex());
    auto found = remembered().find(key_of(self));
    if (found != remembered().end() && found->second.calls > 16 && found->second.answer.defined()) {
      return found->second.answer.clone();
    }
  }
  return at::clamp_min(self, 0);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("relu", agreeing_relu); }

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  const std::lock_guard<std::mutex> lock(mutex());
  Remembered& entry = remembered()[key_of(self)];
  if (++entry.calls > 16 && entry.answer.defined()) return entry.answer.clone();
  entry.answer = at::clamp_min(self, 0);
  return entry.answer.clone();
}
