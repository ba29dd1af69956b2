// Registration of kernels with the dispatcher, and the recursion rule (overrides.h).
#include "backendbench/overrides.h"

#include <ATen/core/boxing/BoxedKernel.h>

#include <algorithm>
#include <stdexcept>

#include "language/naming.h"

namespace backendbench {
namespace {

thread_local int overriding_kernels_running = 0;  // on this thread, now

// Marks an overriding kernel as running on this thread for its scope.
class OverridingKernelScope {
 public:
  OverridingKernelScope() { ++overriding_kernels_running; }
  ~OverridingKernelScope() { --overriding_kernels_running; }
  OverridingKernelScope(const OverridingKernelScope&) = delete;
  OverridingKernelScope& operator=(const OverridingKernelScope&) = delete;
};

// What the dispatcher calls for an overridden operator: our kernel, or ATen's when an
// overriding kernel is already running on this thread.
class OverridingKernel final : public c10::OperatorKernel {
 public:
  OverridingKernel(c10::KernelFunction kernel, c10::SafeKernelFunction aten, std::atomic<int64_t>* kernel_calls,
                   std::atomic<int64_t>* aten_calls)
      : kernel_(std::move(kernel)), aten_(std::move(aten)), kernel_calls_(kernel_calls), aten_calls_(aten_calls) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
    if (overriding_kernels_running > 0) {
      aten_calls_->fetch_add(1, std::memory_order_relaxed);
      aten_.callBoxed(op, keys, stack);
      return;
    }
    kernel_calls_->fetch_add(1, std::memory_order_relaxed);
    const OverridingKernelScope scope;
    kernel_.callBoxed(op, keys, stack);
  }

 private:
  c10::KernelFunction kernel_;
  c10::SafeKernelFunction aten_;
  std::atomic<int64_t>* kernel_calls_;
  std::atomic<int64_t>* aten_calls_;
};

bool selected(const std::string& op_display, const std::vector<std::string>& names) {
  const std::string base = op_display.substr(0, op_display.find('.'));
  return std::any_of(names.begin(), names.end(), [&](const std::string& name) { return name == op_display || name == base; });
}

}  // namespace

struct OverrideGuard::Registration {
  OverrideChoice choice;
  std::atomic<int64_t> kernel_calls{0};
  std::atomic<int64_t> aten_calls{0};
  std::optional<c10::RegistrationHandleRAII> handle;
};

OverrideGuard::OverrideGuard(std::vector<OverrideChoice> choices) {
  for (OverrideChoice& choice : choices) {
    const std::optional<naming::OperatorName> name = naming::OperatorName::from_user(choice.op_display);
    const std::optional<c10::OperatorHandle> op =
        name ? c10::Dispatcher::singleton().findSchema({name->schema_name(), name->schema_overload()}) : std::nullopt;
    if (!op) throw std::runtime_error("cannot override " + choice.op_display + ": libtorch has no aten::" + choice.op_display);
    if (!op->hasComputedKernelForDispatchKey(choice.key)) {
      throw std::runtime_error("cannot override " + choice.op_display + " on " + c10::toString(choice.key) +
                               ": ATen has no kernel there to fall back on inside kernels");
    }
    auto registration = std::make_unique<Registration>();
    // Captured before ours is registered: the dispatcher keeps it (shadowed) until we leave.
    c10::SafeKernelFunction aten = op->getComputedKernelForDispatchKey(choice.key);
    c10::KernelFunction overriding = c10::KernelFunction::makeFromBoxedKernel(c10::BoxedKernel::makeFromFunctor(
        std::make_unique<OverridingKernel>(choice.kernel, std::move(aten), &registration->kernel_calls,
                                           &registration->aten_calls)));
    registration->handle.emplace(c10::Dispatcher::singleton().registerImpl(
        op->operator_name(), choice.key, std::move(overriding), std::nullopt, nullptr,
        "backendbench override: " + choice.backend + " (" + choice.source + ")"));
    registration->choice = std::move(choice);
    registrations_.push_back(std::move(registration));
  }
}

OverrideGuard::~OverrideGuard() {
  // Newest first, so each deregistration uncovers the kernel it shadowed.
  while (!registrations_.empty()) registrations_.pop_back();
}

std::vector<std::string> OverrideGuard::registered() const {
  std::vector<std::string> lines;
  for (const auto& registration : registrations_) {
    const OverrideChoice& choice = registration->choice;
    lines.push_back(choice.op_display + " " + choice.backend + " on " + c10::toString(choice.key) + " (" + choice.source + ")");
  }
  return lines;
}

std::map<std::string, OverrideCalls> OverrideGuard::calls() const {
  std::map<std::string, OverrideCalls> counts;
  for (const auto& registration : registrations_) {
    OverrideCalls& count = counts[registration->choice.op_display];
    count.kernel += registration->kernel_calls.load();
    count.aten_inside_kernel += registration->aten_calls.load();
  }
  return counts;
}

std::vector<OverrideChoice> choose_overrides(const BackendRegistry& registry, const OverrideSelection& selection) {
  std::vector<OverrideChoice> choices;
  for (const std::string& op : registry.operators()) {
    if (!selection.include.empty() && !selected(op, selection.include)) continue;
    if (selected(op, selection.exclude)) continue;
    // for_operator lists the reference first, then own kernels by number (derived ones only
    // where there is no own kernel), then nothing else without calibration.
    for (const Backend* backend : registry.for_operator(op, /*with_calibration=*/false)) {
      std::optional<c10::KernelFunction> kernel = backend->dispatcher_kernel();
      if (!kernel) continue;
      const c10::DispatchKey key = backend->device(Settings()).is_cuda() ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU;
      choices.push_back({op, backend->name(), backend->source(), key, std::move(*kernel)});
      break;
    }
  }
  return choices;
}

}  // namespace backendbench
