// Wrong: |x| + 1 on its worker's odd calls, a crash on its even ones: wrong on a case's first
// draw, dead on its second (|x| + 1 is never relu's value; an identity "relu" passed a draw that
// held no negative value, about one run in a hundred). The worker calls both draws at once while
// the supervisor checks the first; the verdict is the first draw's values, and the crash after it
// (read and dropped) must not reach the next case, which gets a fresh worker.
// expect-failure: \(draw 1 of 2\): output 0: .*values differ beyond
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  static int calls = 0;
  if (++calls % 2 == 0) {
    volatile float* nowhere = nullptr;
    *nowhere = 1.0f;
  }
  return self.abs() + 1;
}
