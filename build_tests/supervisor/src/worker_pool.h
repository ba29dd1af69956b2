// The kernel workers' pool as the timing of a worker's kernel asks it (measure_in_worker.cpp);
// the pool itself, and who may start and stop its workers, are worker_pool.cpp's.
#pragma once

#include <sys/types.h>

#include <c10/core/Device.h>
#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backendbench/backend.h"
#include "protocol/device_share.h"
#include "protocol/worker_protocol.h"
#include "supervisor/gpu_holders.h"

namespace backendbench {

class WorkerPoolRequests {
 public:
  // A worker: its device class (GPU or not) and the manifest line whose kernels it loads.
  using Key = std::pair<bool, int>;
  // The worker that runs `backend`'s calls on `device`.
  static Key key_of(const Backend& backend, c10::Device device);

  // One request to `key`'s worker (started if need be): its response header, and its payload
  // into `response_payload`, of at most `max_payload_bytes`. Throws std::runtime_error with the
  // worker's last output when it fails (the worker is then stopped). `descriptors` go before it
  // on the worker's socket (a CPU run's memory file: memory_file.h).
  nlohmann::json request(Key key, const nlohmann::json& header, const std::vector<char>& payload,
                         std::vector<char>* response_payload, uint64_t max_payload_bytes = worker::kMaxPayloadBytes,
                         const std::vector<int>& descriptors = {});
  // The slots of a GPU worker's device copies, as this process mapped them.
  const device_share::Imports& gpu_imports(int line);
  // The first process of `key`'s worker; -1 when none runs.
  pid_t worker_pid(Key key);
  // A worker's round trip by this process's clock, timed before its kernel code loaded (a request
  // the worker answers only then, so no kernel can lengthen it): the least and the median of
  // kRoundTripProbes requests. Both -1 when `key`'s worker does not run.
  struct RoundTrip {
    double least_seconds = -1, median_seconds = -1;
  };
  static constexpr int kRoundTripProbes = 9;
  RoundTrip round_trip(Key key);
  // A CUDA worker's shared path (hand_over_run_inputs, below), timed before its kernel code loaded
  // as its round trip is: kRoundTripProbes hand-overs of a probe's few bytes, each followed by one
  // kernel of the worker's over them and its synchronisation (`run_inputs_probe`), the clock from
  // the hand-over's start to the answer, less the least round trip. What no run through that path
  // can avoid (the unlock, the continue, the GPU's switch from this process's context to the
  // worker's), measured where no kernel can shorten or lengthen it. Both -1 where the path is not
  // used: a CPU worker, BACKENDBENCH_CUDA_RUN_INPUTS=recipe, or a machine that cannot share memory
  // or lock processes. Both kRunInputsPathRefused where the path was to be used and its probe
  // could not run (the memory not made, a hand-over or unlock refused): then no run is timed, for
  // falling back to the recipe there would let another kernel (one that takes the GPU's memory
  // while this worker starts) choose the weaker bound for it.
  RoundTrip run_inputs_path(Key key);
  static constexpr double kRunInputsPathRefused = -2;
  // The first process of every running worker and spare but `except`'s: what is stopped while a
  // kernel is timed.
  std::vector<pid_t> worker_pids_but(std::optional<Key> except);
};

// How long a CUDA worker's work on the GPU may take to finish when its processes are locked before
// a run's inputs are written (device_share.h: ProcessLocks): an honest worker has none left by then
// (it answered prepare_run), and a kernel left watching for the inputs never finishes.
inline constexpr int kRunInputsLockMilliseconds = 500;

// The shared path's hand-over of a CUDA run's inputs (device_share.h: DeviceMemoryFile,
// ProcessLocks): the processes of `worker`'s tree locked, each once none of its work is left on
// the GPU, stopped, `write` called (a kernel of this process's, waited for), the clock started,
// the processes continued and then unlocked (the driver answers from a thread inside each).
// `refused` says why the inputs could not be handed over ("" when they were); the worker's
// processes then run on, unlocked. Throws std::runtime_error when a process refuses its unlock.
struct RunInputsHandOver {
  std::string refused;
  bool work_left = false;  // refused: a process's work was still on the GPU
  GpuHoldersSaid holders;  // then: who holds the GPU (gpu_holders.h)
  std::chrono::steady_clock::time_point clock_started;
};
RunInputsHandOver hand_over_run_inputs(pid_t worker, const std::function<void()>& write);

// The lock holds a process's CUDA calls, not its kernels already on the GPU: whether another
// context's work keeps the GPU busy, by this process's clock over the least of kGpuIdleProbes
// one-element kernels of its own, each waited for (an H100 runs one in 11-13 us; beside another
// process's one-thread spin the least of five read 263-2372 us, the GPU's time slices being
// about 2 ms, and a 256 MiB multiply took 424 us instead of 182 us). Before another kernel is
// asked, the worker whose turn just ended is ended while it is (kernel_workers.h,
// kGpuRoomShare); a run's inputs are not handed over while it is. False where this process has
// no GPU.
inline constexpr int kGpuIdleProbes = 5;
inline constexpr double kGpuIdleSeconds = 100e-6;
bool gpu_busy_now();

// Whether the GPU is idle (gpu_busy_now) within `seconds`, asked every millisecond. Before this
// process times the reference on CUDA with the timed kernel's worker stopped (measure_in_worker):
// stopping holds the worker's calls, not its kernels already on the GPU, and one left running
// there would share the GPU with the reference's calls and slow the yardstick the kernel's
// speedup is bounded by. An honest worker has none left once it has answered.
inline constexpr double kGpuLeftWorkSeconds = 0.5;
bool gpu_idle_within(double seconds);

}  // namespace backendbench
