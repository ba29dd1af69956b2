// Attack: allocator reuse. Returns uninitialised memory of the right shape, hoping it holds the
// reference's answer from a block the allocator just freed. The reference never runs in its
// process, so no such block exists there: it fails (on CPU and on CUDA).
// expect-failure: (values differ beyond|is constant)
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::empty_like(self); }
