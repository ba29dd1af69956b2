// Attack: allocator reuse on CUDA. Returns uninitialised device memory of the right shape,
// hoping the caching allocator hands it the block the reference's output just freed. The
// reference runs in the supervisor, never in the kernel's worker: there is no such block to
// reuse, and it fails (scripts/security_gpu.sh).
// expect-failure: (values differ beyond|is constant|not finite|NaN)
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::empty_like(self); }
