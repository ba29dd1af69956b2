// Registration of kernels with the dispatcher, and the recursion rule (overrides.h).
#include "backendbench/overrides.h"

#include <ATen/core/boxing/BoxedKernel.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "backendbench/files.h"
#include "backendbench/verdict.h"
#include "language/naming.h"

namespace backendbench {
namespace {

int& overriding_kernels_running() {
  thread_local int running = 0;  // on this thread, now
  return running;
}

// Calls ATen's kernel as captured (SafeKernelFunction: boxed only, and it refuses a kernel
// that has since been deregistered).
class CapturedAtenKernel final : public c10::OperatorKernel {
 public:
  explicit CapturedAtenKernel(c10::SafeKernelFunction aten) : aten_(std::move(aten)) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
    aten_.callBoxed(op, keys, stack);
  }

 private:
  c10::SafeKernelFunction aten_;
};

// ATen's kernel as a KernelFunction: its own, called unboxed, where libtorch's SafeKernelFunction
// hands it out (kernelFunction(), newer libtorch); else a boxed call of the captured one.
template <typename Safe>
auto aten_kernel(const Safe& aten, int) -> decltype(c10::KernelFunction(aten.kernelFunction())) {
  return aten.kernelFunction();
}
template <typename Safe>
c10::KernelFunction aten_kernel(const Safe& aten, long) {
  return c10::KernelFunction::makeFromBoxedKernel(
      c10::BoxedKernel::makeFromFunctor(std::make_unique<CapturedAtenKernel>(aten)));
}

c10::DispatchKey key_of(const Backend& kernel) {
  return kernel.device(Settings()).is_cuda() ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU;
}

bool matches_any(const std::string& op_display, const std::vector<std::string>& filters) {
  const std::optional<naming::OperatorName> op = naming::OperatorName::from_user(op_display);
  return op && std::any_of(filters.begin(), filters.end(),
                           [&](const std::string& filter) { return naming::matches_filter(*op, filter); });
}

}  // namespace

struct OverrideGuard::Registration {
  OverrideChoice choice;
  OverridingState state;  // read by the registered kernel: outlives the handle (declared first)
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
    registration->state.aten = aten_kernel(op->getComputedKernelForDispatchKey(choice.key), 0);
    registration->state.running_on_this_thread = &overriding_kernels_running;
    c10::KernelFunction overriding = choice.kernel.overriding(*op, &registration->state);
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
    count.kernel += registration->state.kernel_calls.load();
    count.aten_inside_kernel += registration->state.aten_calls.load();
  }
  return counts;
}

void add_to_records(KernelRecords& records, const Verdict& verdict) {
  if (verdict.status == Verdict::Status::kSkipped) return;
  KernelRecord& record = records[{verdict.op, verdict.backend}];
  ++record.cases;
  if (!verdict.passed()) {
    record.failures.push_back(verdict.suite + " " + verdict.case_name + ": " +
                              (verdict.errors.empty() ? std::string("failed") : verdict.errors.front()));
  } else if (verdict.timing && verdict.timing->speedup > 0) {
    record.log_speedup_sum += std::log(verdict.timing->speedup);
    ++record.timed;
  }
}

KernelRecords read_kernel_records(const std::string& results_directory) {
  KernelRecords records;
  for (const std::string& file : files::files_ending_with(results_directory, ".verdicts.jsonl")) {
    for (const Verdict& verdict : read_verdicts(file).verdicts) add_to_records(records, verdict);
  }
  return records;
}

namespace {

// The choice among one operator's kernels for one device key (choose_overrides).
void choose_for_key(const std::string& op, c10::DispatchKey key, const std::vector<const Backend*>& kernels,
                    const OverrideSelection& selection, OverridePlan& plan) {
  auto record_of = [&](const Backend* backend) -> const KernelRecord* {
    auto found = selection.records.find({op, backend->name()});
    return found == selection.records.end() ? nullptr : &found->second;
  };
  const Backend* chosen = nullptr;
  double best_speedup = 0;
  bool any_record = false;
  for (const Backend* backend : kernels) {
    const KernelRecord* record = record_of(backend);
    any_record = any_record || record != nullptr;
    if (record == nullptr || !record->passed()) continue;
    const double speedup = record->timed > 0 ? std::exp(record->log_speedup_sum / record->timed) : 0;
    if (chosen == nullptr || speedup > best_speedup) {
      chosen = backend;
      best_speedup = speedup;
    }
  }
  for (const Backend* backend : kernels) {
    const KernelRecord* record = record_of(backend);
    if (record == nullptr || record->failures.empty()) continue;
    const std::string failing = op + " " + backend->name() + " (" + backend->source() + ") failed " +
                                std::to_string(record->failures.size()) + " of " + std::to_string(record->cases) +
                                " cases, first " + record->failures.front();
    if (chosen == nullptr && selection.force_failing) {
      chosen = backend;
      plan.warnings.push_back(failing + "; registered all the same (forced)");
    } else {
      plan.warnings.push_back(failing + "; not registered" +
                              (chosen == nullptr ? " (force it to register it anyway)" : ""));
    }
  }
  if (!any_record && !kernels.empty()) {
    chosen = kernels.front();
    plan.warnings.push_back(op + " " + chosen->name() + " (" + chosen->source() +
                            ") has no results yet; registered unverified (run its tests first)");
  }
  if (chosen == nullptr) return;
  plan.choices.push_back({op, chosen->name(), chosen->source(), key, *chosen->dispatcher_kernel()});
}

}  // namespace

bool is_selected(const std::string& op_display, const std::vector<std::string>& include,
                 const std::vector<std::string>& exclude) {
  return (include.empty() || matches_any(op_display, include)) && !matches_any(op_display, exclude);
}

OverridePlan choose_overrides(const BackendRegistry& registry, const OverrideSelection& selection) {
  OverridePlan plan;
  for (const std::string& op : registry.operators()) {
    if (!is_selected(op, selection.include, selection.exclude)) continue;
    // for_operator: the reference first, then the operator's kernels by number (derived ones
    // only where it has no own kernel). One choice per device key: a CPU kernel and a CUDA
    // kernel of one operator serve different tensors.
    std::map<c10::DispatchKey, std::vector<const Backend*>> kernels_by_key;
    for (const Backend* backend : registry.for_operator(op, /*with_calibration=*/false)) {
      if (backend->dispatcher_kernel()) kernels_by_key[key_of(*backend)].push_back(backend);
    }
    for (const auto& [key, kernels] : kernels_by_key) choose_for_key(op, key, kernels, selection, plan);
  }
  return plan;
}

}  // namespace backendbench
