// Attack: defer the work to between samples. Its call returns an unfilled output at once and
// leaves the relu pending; a RecordFunction callback it registers at load does the pending work
// at the start of the next ATen operator the process runs, which, while timed, is the
// reference's call of the next sample (or the refresh of the inputs, or the copy of the outputs
// that the checks make first, so every check passes). Its samples claim almost no time and
// charge its work to the reference's. The supervisor's clock over its calls back to back sees
// the work (the digest of the last outputs is computed with ATen operators, which run it).
#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace {

std::mutex& mutex() {
  static std::mutex m;
  return m;
}

std::vector<std::pair<at::Tensor, at::Tensor>>& pending() {
  static auto* work = new std::vector<std::pair<at::Tensor, at::Tensor>>;
  return *work;
}

thread_local bool finishing = false;

void finish_pending() {
  if (finishing) return;
  finishing = true;
  std::vector<std::pair<at::Tensor, at::Tensor>> work;
  {
    const std::lock_guard<std::mutex> lock(mutex());
    work.swap(pending());
  }
  for (auto& [input, output] : work) at::clamp_min_out(output, input, 0);
  finishing = false;
}

const at::CallbackHandle handle = at::addGlobalCallback(at::RecordFunctionCallback(
    [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> {
      finish_pending();
      return nullptr;
    }));

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  finish_pending();
  at::Tensor out = at::empty_like(self);
  const std::lock_guard<std::mutex> lock(mutex());
  pending().emplace_back(self, out);
  return out;
}
