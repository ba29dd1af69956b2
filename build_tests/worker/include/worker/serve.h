// The kernel worker: the only code that runs beside kernel code. It answers the supervisor's
// requests (worker_protocol.h) on a pair of file descriptors, calling the kernels it loaded in its
// own process (backend.h), until its input closes; it reports what it saw and measured, and
// judges nothing (the supervisor, supervisor/kernel_workers.h, decides every verdict). Like
// protoc's plugins: a typed request in, a typed response out; its main() is worker/main.cpp.
#pragma once

#include <string>

namespace backendbench {

// The worker's loop: reads requests from `in_fd`, writes responses to `out_fd`. `load_error`:
// why the manifest did not load ("" when it did), the answer to every request. `device_socket`
// (a GPU worker's, else -1): where it sends the descriptors of device copies (device_share.h).
// `awaiting_manifest`: a spare worker, started before its job (serve_jobs in job_service.h): it
// starts libtorch (and CUDA) at once, and its first request is `load`, which names the manifest;
// `start_python`: a spare that starts Python as well (start_python_kernels).
// Returns the exit status (0 when the input closed).
int serve_kernel_worker(int in_fd, int out_fd, std::string load_error, int device_socket = -1,
                        bool awaiting_manifest = false, bool start_python = false);

}  // namespace backendbench
