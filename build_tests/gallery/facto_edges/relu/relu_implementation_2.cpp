// Wrong on an integer input: written for floating dtypes only (a dispatch over float, half and
// bfloat16), so an int64 tensor throws. Right on every floating input (smoke, TorchBench).
// expect-failure in gallery_facto: threw on relu\.default case [a-z0-9_]+ \(\(T\(\[3, 5\], i64\),\), \{\}\) \([^)]*facto\.txt:[0-9]+\) \(draw 1 of 2\): "relu_kernel_impl" not implemented for 'Long'
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  const at::Tensor input = self.contiguous();
  at::Tensor output = at::empty(input.sizes(), input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "relu_kernel_impl", [&] {
    const scalar_t* in = input.const_data_ptr<scalar_t>();
    scalar_t* out = output.data_ptr<scalar_t>();
    for (int64_t i = 0; i < input.numel(); ++i) out[i] = in[i] > scalar_t(0) ? in[i] : scalar_t(0);
  });
  return output;
}
