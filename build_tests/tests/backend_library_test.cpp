// The one library holding every kernel of a set (backendbench_add_backend), loaded as a user
// loads it (dlopen): two kernels of it that define a global helper of the same name with
// different meanings (gallery/same_helper_names), and whose kernel functions have the same name,
// must each run their own, alone and as registered with the dispatcher.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <dlfcn.h>

#include <set>

#include "backendbench/kernel_binding.h"

namespace backendbench {
namespace {

int& running_on_this_thread() {
  thread_local int running = 0;
  return running;
}

// impl2 of the gallery writes a two-dimensional output column-major: which kernel ran shows.
bool column_major(const at::Tensor& output) { return output.dim() == 2 && output.stride(0) == 1; }

TEST(OneLibrary, KernelsWithTheSameNamesEachRunTheirOwn) {
  void* library = dlopen(BACKENDBENCH_SAME_HELPER_NAMES_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto entries = reinterpret_cast<KernelEntries>(dlsym(library, kKernelEntriesSymbol));
  ASSERT_NE(entries, nullptr);
  size_t count = 0;
  const KernelEntry* first = entries(&count);
  const at::Tensor x = at::tensor({-2.f, -0.5f, 0.f, 1.5f, 3.f, -1.f}).reshape({3, 2});
  const c10::OperatorHandle relu = *c10::Dispatcher::singleton().findSchema({"aten::relu", ""});
  const c10::DispatchKeySet cpu(c10::DispatchKey::CPU);
  std::set<std::string> ran;
  for (size_t i = 0; i < count; ++i) {
    if (std::string(first[i].op) != "relu.default") continue;
    const std::string backend = first[i].backend;
    const DispatcherKernel kernel = first[i].factory();
    // Called alone, as the tests call it: each kernel its own helper (same name, other meaning)
    // and its own output layout.
    torch::jit::Stack alone = {x};
    kernel.kernel.callBoxed(relu, cpu, &alone);
    EXPECT_TRUE(at::equal(alone[0].toTensor(), at::relu(x))) << backend << ": " << alone[0].toTensor();
    EXPECT_EQ(column_major(alone[0].toTensor()), backend == "impl2") << backend;
    // As the dispatcher would run it once registered: still its own, not the other kernel of the
    // same function name.
    OverridingState state;
    state.running_on_this_thread = &running_on_this_thread;
    torch::jit::Stack overriding = {x};
    kernel.overriding(relu, &state).callBoxed(relu, cpu, &overriding);
    EXPECT_TRUE(at::equal(overriding[0].toTensor(), at::relu(x))) << backend;
    EXPECT_EQ(column_major(overriding[0].toTensor()), backend == "impl2") << backend;
    EXPECT_EQ(state.kernel_calls.load(), 1);
    ran.insert(backend);
  }
  EXPECT_EQ(ran, (std::set<std::string>{"impl1", "impl2"}));
}

}  // namespace
}  // namespace backendbench
