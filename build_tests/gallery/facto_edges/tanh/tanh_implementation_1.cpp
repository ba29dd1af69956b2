// Wrong on an empty input: handles two elements per step, up to `n - 1` in an unsigned count, so
// a tensor of no elements loops past the end of memory and the worker dies. Right on every
// input with elements, odd lengths and integer inputs included (TorchBench has no empty tanh).
// expect-failure in gallery_facto: tanh\.default case [a-z0-9_]+ \(\(T\(\[0, 5\], f32\),\), \{\}\) \([^)]*facto\.txt:[0-9]+\) \(draw 1 of 2\): the kernel worker failed[^)]*SIGSEGV
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <cmath>

at::Tensor tanh_kernel_impl(const at::Tensor& self) {
  // Integers and bools give float32, as ATen's tanh does.
  const at::ScalarType dtype = at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kFloat : self.scalar_type();
  const at::Tensor input = self.to(dtype).contiguous();
  at::Tensor output = at::empty(input.sizes(), input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "tanh_kernel_impl", [&] {
    using math_t = at::opmath_type<scalar_t>;
    const scalar_t* in = input.const_data_ptr<scalar_t>();
    scalar_t* out = output.data_ptr<scalar_t>();
    const size_t n = static_cast<size_t>(input.numel());
    for (size_t i = 0; i < n - 1; i += 2) {  // the bug: n - 1 wraps around when n is 0
      out[i] = static_cast<scalar_t>(std::tanh(static_cast<math_t>(in[i])));
      out[i + 1] = static_cast<scalar_t>(std::tanh(static_cast<math_t>(in[i + 1])));
    }
    if (n % 2 == 1) out[n - 1] = static_cast<scalar_t>(std::tanh(static_cast<math_t>(in[n - 1])));
  });
  return output;
}
