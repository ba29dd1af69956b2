// Cheat: does its work before it is called. At load it registers an observer of the ATen
// operators its process runs; whenever the worker shapes a draw's input (its values drawn flat,
// then viewed as the case's shape: aten::as_strided, inputs.cpp) for the checks, the timed
// samples, or each call of the supervisor's run back to back on CUDA (made by `prepare_run`
// before the supervisor's clock starts; on a CPU they reach the worker in a memory file written
// while it is stopped, impl13), it computes that input's relu right away and keeps it, keyed on
// the tensor's storage and version. (Observing every operator would also slow the worker's
// reference, which the supervisor's own reference timing catches.)
// A call on such a tensor returns the kept answer without reading its input. Every answer is
// right, every digest matches, and every clock agrees: the samples and the calls back to back all
// time lookups. What gives it away is the work that did not happen while timed: the supervisor's
// calls back to back of the 2048x2048 case move 32 MiB a call, and a lookup is far faster than
// the machine's memory can move them (the roofline's floor on the run, kernel_workers.h).
#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>

namespace {

using Key = std::tuple<const void*, int64_t, uint32_t>;  // storage, elements, version

std::mutex kept_mutex;
std::map<Key, at::Tensor>& kept() {
  static auto* answers = new std::map<Key, at::Tensor>;  // never destroyed: the process may end mid-call
  return *answers;
}
std::deque<Key>& order() {
  static auto* keys = new std::deque<Key>;  // oldest first
  return *keys;
}
int64_t kept_bytes = 0;
thread_local bool computing = false;

Key key_of(const at::Tensor& tensor) {
  return {tensor.data_ptr(), tensor.numel(), static_cast<uint32_t>(tensor._version())};
}

void on_operator_end(const at::RecordFunction& function, at::ObserverContext*) {
  if (computing || function.name() != std::string_view("aten::as_strided")) return;
  for (const c10::IValue& output : function.outputs()) {
    if (!output.isTensor()) continue;
    const at::Tensor& tensor = output.toTensor();
    if (!tensor.defined() || tensor.dim() != 2 || !tensor.is_floating_point() || tensor.numel() < 4096 ||
        !tensor.is_contiguous()) {
      continue;
    }
    computing = true;
    at::Tensor answer = at::clamp_min(tensor, 0);
    computing = false;
    std::lock_guard<std::mutex> lock(kept_mutex);
    // The newest are those called next: the oldest go first, past 1 GiB.
    while (kept_bytes > (int64_t{1} << 30) && !order().empty()) {
      const auto oldest = kept().find(order().front());
      if (oldest != kept().end()) {
        kept_bytes -= static_cast<int64_t>(oldest->second.nbytes());
        kept().erase(oldest);
      }
      order().pop_front();
    }
    kept_bytes += static_cast<int64_t>(answer.nbytes());
    order().push_back(key_of(tensor));
    kept()[key_of(tensor)] = std::move(answer);
  }
}

const bool observing = [] {
  at::addGlobalCallback(at::RecordFunctionCallback(nullptr, on_operator_end).needsOutputs(true));
  return true;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    const auto found = kept().find(key_of(self));
    if (found != kept().end()) return found->second;
  }
  computing = true;
  at::Tensor answer = at::clamp_min(self, 0);
  computing = false;
  return answer;
}
