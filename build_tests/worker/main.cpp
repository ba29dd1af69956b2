// backendbench-worker: the only executable that loads kernel code. It loads the kernel manifest
// it is given (at its first request that is not `round_trip`) and answers the requests of the
// supervisor that started it (serve.h, worker_protocol.h) on its standard input and output, until
// the input closes. Whatever a kernel prints goes to standard error: the protocol has the original
// standard output to itself.
//
//   backendbench-worker --manifest <kernel manifest> --line <N> [--socket 3 [--gpu]]
//   backendbench-worker --spare [--python] [--socket 3 [--gpu]]
//
// --line: the one line of the manifest whose kernels it loads (0 for the first; one kernel per
// worker, kernel_imports.h).
// --spare: started before its job is known (job_service.h); it starts libtorch (and CUDA) while
// it waits, and its first request names the manifest to load. --python: it starts Python and
// imports torch (and Triton) too, for a job of Python kernels.
// --socket: its Unix socket to its supervisor, descriptor 3, for the descriptors of a GPU worker's
// device copies of large outputs (device_share.h) and of a CPU worker's run inputs
// (memory_file.h). --gpu: it runs the CUDA cases.
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/timing.h"
#include "worker/serve.h"

int main(int argc, char** argv) {
  backendbench::fix_large_allocations();  // before any kernel code loads (timing.h)
  std::vector<std::string> arguments(argv + 1, argv + argc);
  backendbench::WorkerStart start;
  start.gpu = !arguments.empty() && arguments.back() == "--gpu";
  if (start.gpu) arguments.pop_back();
  if (arguments.size() >= 2 && arguments[arguments.size() - 2] == "--socket" && arguments.back() == "3") {
    start.socket = 3;
    arguments.resize(arguments.size() - 2);
  }
  start.start_python = arguments.size() == 2 && arguments[0] == "--spare" && arguments[1] == "--python";
  if (start.start_python) arguments.pop_back();
  const bool spare = arguments.size() == 1 && arguments[0] == "--spare";
  start.awaiting_manifest = spare;
  int line = -1;
  if (!spare && arguments.size() == 4 && arguments[2] == "--line" && !arguments[3].empty() &&
      arguments[3].find_first_not_of("0123456789") == std::string::npos && arguments[3].size() < 7) {
    line = std::stoi(arguments[3]);
    arguments.resize(2);
  }
  if ((!spare && (arguments.size() != 2 || arguments[0] != "--manifest" || line < 0)) || (start.gpu && start.socket < 0)) {
    std::cerr << "backendbench-worker: error: expected `backendbench-worker --manifest <file> --line <N> [--socket 3 [--gpu]]` "
                 "or `backendbench-worker --spare [--python] [--socket 3 [--gpu]]`; it is started by the test executables and "
                 "./bench, not by hand\n";
    return 2;
  }
  // The protocol's output is a private copy of stdout; stdout itself becomes stderr.
  const int protocol_out = dup(STDOUT_FILENO);
  if (protocol_out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("backendbench-worker: cannot set up its output");
    return 2;
  }
  // The manifest loads at the first request that is not `round_trip` (serve.h).
  std::optional<backendbench::ManifestLine> to_load;
  if (!spare) to_load = backendbench::ManifestLine{arguments[1], line};
  return backendbench::serve_kernel_worker(STDIN_FILENO, protocol_out, to_load, start);
}
