// The one library holding every kernel of a set (backendbench_add_backend), loaded as a user
// loads it (dlopen): two kernels of it that define a global helper of the same name with
// different meanings (gallery/same_helper_names) must each run their own.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <dlfcn.h>

#include <set>

#include "backendbench/kernel_binding.h"

namespace backendbench {
namespace {

TEST(OneLibrary, KernelsWithTheSameHelperNamesEachRunTheirOwn) {
  void* library = dlopen(BACKENDBENCH_SAME_HELPER_NAMES_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto entries = reinterpret_cast<KernelEntries>(dlsym(library, kKernelEntriesSymbol));
  ASSERT_NE(entries, nullptr);
  size_t count = 0;
  const KernelEntry* first = entries(&count);
  const at::Tensor x = at::tensor({-2.f, -0.5f, 0.f, 1.5f, 3.f});
  const c10::OperatorHandle relu = *c10::Dispatcher::singleton().findSchema({"aten::relu", ""});
  std::set<std::string> ran;
  for (size_t i = 0; i < count; ++i) {
    if (std::string(first[i].op) != "relu.default") continue;
    torch::jit::Stack stack = {x};
    first[i].factory().callBoxed(relu, c10::DispatchKeySet(c10::DispatchKey::CPU), &stack);
    EXPECT_TRUE(at::equal(stack[0].toTensor(), at::relu(x))) << first[i].backend << ": " << stack[0].toTensor();
    ran.insert(first[i].backend);
  }
  EXPECT_EQ(ran, (std::set<std::string>{"impl1", "impl2"}));
}

}  // namespace
}  // namespace backendbench
