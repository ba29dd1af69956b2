// Neighbour (CUDA only): holds the GPU in a process the driver does not know as a CUDA one. A
// right relu (at::clamp_min) whose library, as it loads, forks a child (named bb_nvfd_child) that
// opens the GPU's device files itself and waits: a process that talks to the driver directly
// (its own ioctls) has no CUDA state for the driver's checkpoint lock to hold, so locking it
// would hold nothing of what it can do on the GPU. The supervisor does not pass over a process
// that holds the GPU's device files (device_share.h, ProcessLocks, kGpuDeviceFiles): this
// worker cannot be held while another kernel runs, and is ended then ("it could not be held"),
// its child with it (cuda_neighbours.py: no bb_nvfd_child outlives the run); the kernel beside
// it keeps its figures.
#ifndef BACKENDBENCH_DEVICE_PART
#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace {

const bool forked = [] {
  const pid_t child = fork();
  if (child != 0) return child > 0;
  prctl(PR_SET_NAME, "bb_nvfd_child");
  const int control = open("/dev/nvidiactl", O_RDWR);
  const int device = open("/dev/nvidia0", O_RDWR);
  for (;;) pause();  // holding `control` and `device` until it is ended
  (void)control;
  (void)device;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0); }
#endif
