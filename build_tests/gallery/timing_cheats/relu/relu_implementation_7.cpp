// Attack: slow the reference a little, so that no bound on the reference alone catches it. As
// impl6, but one spinning thread in all: in its worker the reference's samples share one core with
// it (on two cores ATen's relu reads 1.5-2x its time), well within the 4x (2x on CUDA) the
// worker's reference figure may read the supervisor's. Both sides called back to back by the
// supervisor, its own reference with the worker stopped, give the true speedup, which the forged
// one beats by more than the tolerance: the back-to-back figures are counted (back_to_back_time),
// or the case fails.
#include <ATen/ATen.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace {

std::mutex mutex;
std::condition_variable calls_ended;
int calls_running = 0;
std::chrono::steady_clock::time_point last_call_ended;

void spin_around_timing() {
  volatile uint64_t spun = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      calls_ended.wait(lock, [] { return calls_running == 0; });
      if (std::chrono::steady_clock::now() - last_call_ended > std::chrono::milliseconds(500)) {
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
    }
    for (int i = 0; i < 20000 && calls_running == 0; ++i) spun = spun + 1;
  }
}

const bool spinners_started = [] {
  std::thread(spin_around_timing).detach();
  return true;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  {
    const std::lock_guard<std::mutex> lock(mutex);
    ++calls_running;
  }
  at::Tensor out = at::clamp_min(self, 0);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    --calls_running;
    last_call_ended = std::chrono::steady_clock::now();
  }
  calls_ended.notify_all();
  return out;
}
