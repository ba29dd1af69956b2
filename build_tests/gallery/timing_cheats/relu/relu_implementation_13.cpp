// Cheat: claims a speedup of 3.4x by doing its work before it is timed, and waits out the rest.
// It keeps every answer it computes, keyed on a fingerprint of the input's values (32 of them):
// the checks' draws are the values its timed samples call it on next, so those calls find their
// answers. The supervisor's calls back to back have values of their own, which the worker lays
// over memory it was handed (aten::set_) and the supervisor writes later: at load this kernel
// registers an observer of such tensors and starts a thread that watches them and computes each
// one's relu the moment its values are there (its last element written: each is written in
// order). A call that finds its answer spins until a 3.4th of the fastest time it took to compute
// an answer honestly has passed, so that its run back to back is not faster than the machine can
// do the work (the supervisor's floor on a run, kernel_workers.h), and returns it; one that finds
// none computes it. Had the supervisor written the run's inputs while this worker ran, the thread
// would have done the run's work before the clock started and both clocks would have agreed (by
// hand, so: 1.8-3.3x on the 2048x2048 case, 2-core machine); the supervisor writes them while
// every process of the worker's is stopped (memory_file.h), so the thread's work is timed, the
// calls back to back find little, and its claim disagrees with the supervisor's clock.
#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

namespace {

constexpr double kClaimed = 3.4;

bool suitable(const at::Tensor& tensor) {
  return tensor.defined() && tensor.is_cpu() && tensor.scalar_type() == at::kFloat && tensor.dim() == 2 &&
         tensor.numel() >= 4096 && tensor.is_contiguous();
}

uint64_t fingerprint(const at::Tensor& tensor) {
  const auto* values = static_cast<const uint32_t*>(tensor.data_ptr());
  const int64_t count = tensor.numel();
  uint64_t hash = static_cast<uint64_t>(count) * 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < 32; ++i) hash = (hash ^ values[i * (count - 1) / 31]) * 0x100000001B3ull;
  return hash;
}

std::mutex kept_mutex;
std::map<uint64_t, at::Tensor>& kept() {
  static auto* answers = new std::map<uint64_t, at::Tensor>;  // never destroyed: the process may end mid-call
  return *answers;
}
std::deque<uint64_t>& kept_order() {
  static auto* order = new std::deque<uint64_t>;
  return *order;
}
std::deque<at::Tensor>& watched() {
  static auto* tensors = new std::deque<at::Tensor>;  // inputs laid over memory written later
  return *tensors;
}
std::atomic<double> honest_seconds_per_element{1.0};  // the fastest seen
thread_local bool computing = false;

void keep(uint64_t key, at::Tensor answer) {
  std::lock_guard<std::mutex> lock(kept_mutex);
  if (kept().emplace(key, std::move(answer)).second) kept_order().push_back(key);
  while (kept_order().size() > 64) {  // about 1 GiB of 2048x2048 answers at most
    kept().erase(kept_order().front());
    kept_order().pop_front();
  }
}

at::Tensor computed(const at::Tensor& self) {
  computing = true;
  const auto started = std::chrono::steady_clock::now();
  at::Tensor answer = at::clamp_min(self, 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  computing = false;
  const double per_element = seconds / static_cast<double>(self.numel());
  for (double seen = honest_seconds_per_element.load(); per_element < seen;) {
    if (honest_seconds_per_element.compare_exchange_weak(seen, per_element)) break;
  }
  return answer;
}

void on_operator_end(const at::RecordFunction& function, at::ObserverContext*) {
  if (computing || function.name() != std::string_view("aten::set_")) return;
  for (const c10::IValue& output : function.outputs()) {
    if (!output.isTensor() || !suitable(output.toTensor())) continue;
    std::lock_guard<std::mutex> lock(kept_mutex);
    watched().push_back(output.toTensor());
    while (watched().size() > 4096) watched().pop_front();
  }
}

// Computes the relu of every watched tensor whose last element has been written since.
void watch() {
  for (;;) {
    std::deque<at::Tensor> ready;
    {
      std::lock_guard<std::mutex> lock(kept_mutex);
      for (auto it = watched().begin(); it != watched().end();) {
        const auto* values = static_cast<const uint32_t*>(it->data_ptr());
        if (values[it->numel() - 1] != 0) {
          ready.push_back(*it);
          it = watched().erase(it);
        } else {
          ++it;
        }
      }
    }
    for (const at::Tensor& input : ready) keep(fingerprint(input), computed(input));
    if (ready.empty()) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

const bool started = [] {
  at::addGlobalCallback(at::RecordFunctionCallback(nullptr, on_operator_end).needsOutputs(true));
  std::thread(watch).detach();
  return true;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (!suitable(self)) return at::clamp_min(self, 0);
  const auto called = std::chrono::steady_clock::now();
  const uint64_t key = fingerprint(self);
  at::Tensor answer;
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    const auto found = kept().find(key);
    if (found != kept().end()) answer = found->second;
  }
  if (!answer.defined()) {
    answer = computed(self);
    keep(key, answer);
    return answer;
  }
  const double wait = honest_seconds_per_element.load() * static_cast<double>(self.numel()) / kClaimed;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - called).count() < wait) {
  }
  return answer;
}
