// The kernel workers' pool as the timing of a worker's kernel asks it (measure_in_worker.cpp);
// the pool itself, and who may start and stop its workers, are worker_pool.cpp's.
#pragma once

#include <sys/types.h>

#include <c10/core/Device.h>
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "backendbench/backend.h"
#include "protocol/device_share.h"
#include "protocol/worker_protocol.h"

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
  // The first process of every running worker and spare but `except`'s: what is stopped while a
  // kernel is timed.
  std::vector<pid_t> worker_pids_but(std::optional<Key> except);
};

}  // namespace backendbench
