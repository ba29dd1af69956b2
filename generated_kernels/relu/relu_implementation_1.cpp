// relu.default on the CPU: a plain loop. NaN stays NaN (NaN < 0 is false), as in ATen.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  TORCH_CHECK(self.device().is_cpu(), "relu_implementation_1 runs on CPU tensors");
  const at::Tensor input = self.contiguous();
  at::Tensor output = at::empty(input.sizes(), input.options());
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "relu_kernel_impl", [&] {
    const scalar_t* in = input.data_ptr<scalar_t>();
    scalar_t* out = output.data_ptr<scalar_t>();
    const scalar_t zero(0);
    const int64_t n = input.numel();  // hoisted: lets the compiler vectorise the loop
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] < zero ? zero : in[i];
  });
  return output;
}
