// Wrong on a non-contiguous input: reads the input's storage in order, as if it were contiguous,
// so a transposed or strided view gets its elements in the wrong places. Right on every
// contiguous input of any dtype and shape (smoke, TorchBench).
// expect-failure in gallery_facto: relu\.default case [a-z0-9_]+ \(\(T\(\[3, 5\], f32, stride=\(1, 3\)\),\), \{\}\) \([^)]*facto\.txt:[0-9]+\) \(draw 1 of 2\): output 0: [0-9]+ of 15 values differ
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  at::Tensor output = at::empty(self.sizes(), self.options());
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "relu_kernel_impl", [&] {
    const scalar_t* in = self.const_data_ptr<scalar_t>();  // the bug: ignores self.strides()
    scalar_t* out = output.data_ptr<scalar_t>();
    for (int64_t i = 0; i < self.numel(); ++i) out[i] = in[i] > scalar_t(0) ? in[i] : scalar_t(0);
  });
  return output;
}
