// Included by generated kernel bindings: what a kernel file may rely on having in scope,
// and the signature check.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/boxing/KernelFunction.h>
#include <torch/library.h>

#include <type_traits>

#define BACKENDBENCH_EXPORT extern "C++" __attribute__((visibility("default")))

namespace backendbench {

// True when `kernel` is exactly a function of type `Expected` (a function type).
template <typename Expected, typename Actual>
constexpr bool is_kernel_signature(Actual* /*kernel*/) {
  return std::is_same_v<Expected, Actual>;
}

}  // namespace backendbench
