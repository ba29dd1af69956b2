// Wrong: ATen's own CPU relu, looked up at run time by its symbol (dlsym), so that neither the
// worker's observer nor the library's imports show it; the name it looks up is in its library,
// which the supervisor reads.
// expect-failure: impl21 .*falls back to ATen: its library names at::cpu::relu\(at::Tensor const&\)
#include <ATen/ATen.h>
#include <dlfcn.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  using Relu = at::Tensor (*)(const at::Tensor&);
  static const auto relu = reinterpret_cast<Relu>(dlsym(RTLD_DEFAULT, "_ZN2at3cpu4reluERKNS_6TensorE"));
  return relu(self);
}
