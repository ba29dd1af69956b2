// The kernel worker: the only code that runs beside kernel code. It answers the supervisor's
// requests (worker_protocol.h) on a pair of file descriptors, calling the kernels it loaded in its
// own process (backend.h), until its input closes; it reports what it saw and measured, and
// judges nothing (the supervisor, supervisor/kernel_workers.h, decides every verdict). Like
// protoc's plugins: a typed request in, a typed response out; its main() is worker/main.cpp.
#pragma once

#include <optional>
#include <string>

namespace backendbench {

// A kernel manifest and the one line of it whose kernels a worker loads (backend.h).
struct ManifestLine {
  std::string path;
  int line = -1;
};

// How a worker was started (worker/main.cpp's options). `socket`: its Unix socket to its
// supervisor (-1: none), where a GPU worker sends the descriptors of device copies
// (device_share.h) and a CPU worker is sent its run's memory file (memory_file.h). `gpu`: it runs
// the CUDA cases. `awaiting_manifest`: a spare worker, started before its job (serve_jobs in
// job_service.h): it starts libtorch (and CUDA) at once, and its first request but `round_trip` is
// `load`, which names the manifest; `start_python`: a spare that starts Python as well
// (start_python_kernels).
struct WorkerStart {
  int socket = -1;
  bool gpu = false;
  bool awaiting_manifest = false;
  bool start_python = false;
};

// The worker's loop: reads requests from `in_fd`, writes responses to `out_fd`. `to_load`: the
// manifest line of a worker started with one (nullopt: a spare, or nothing to load), loaded at
// its first request that is not `round_trip`; until then the worker answers `round_trip` and no
// kernel code is in the process, so the supervisor times its round trip free of any kernel's
// doing. Why the manifest did not load is the answer to every later request.
// Returns the exit status (0 when the input closed).
int serve_kernel_worker(int in_fd, int out_fd, std::optional<ManifestLine> to_load, const WorkerStart& start = {});

}  // namespace backendbench
