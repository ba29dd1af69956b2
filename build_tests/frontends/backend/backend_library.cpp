// The backend library's own code (backendbench_add_backend): the kernels this library holds
// (its index, kernel_index.cpp), the C++ API of enable.h, and the same API as operators of
// the `backendbench` namespace for Python (torch.ops.backendbench.*, used by the package).
// Loading the library registers those control operators only; no ATen operator changes until
// enable.
#include <torch/library.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

#include "backendbench/cases.h"
#include "backendbench/enable.h"
#include "supervisor/run_case.h"
#include "backendbench/settings.h"

extern "C" const backendbench::KernelEntry* backendbench_kernel_entries(size_t* count);

namespace backendbench {
namespace {

// The library's kernels join the process's registry once, on first use.
const BackendRegistry& library_kernels() {
  static std::once_flag added;
  std::call_once(added, [] { add_kernel_entries(&backendbench_kernel_entries, "the backend library's index"); });
  return backends();
}

// Settings for checks run by enable: the environment's (BACKENDBENCH_SALT and the others), a
// fresh salt unless one is given.
Settings check_settings() {
  char program[] = "backendbench";
  char* argv[] = {program, nullptr};
  int argc = 1;
  return parse_settings(Frontend::kTests, argc, argv);
}

// Checks `kernel` on every built-in case of its operator, into `records`.
void check_kernel(const Backend& kernel, const std::vector<const OperatorSpec*>& specs, const Settings& settings,
                  KernelRecords& records) {
  for (const OperatorSpec* spec : specs) {
    for (size_t c = 0; c < spec->case_count; ++c) add_to_records(records, check_case(*spec, spec->cases[c], kernel, settings));
  }
}

}  // namespace

Enabled::Enabled(const EnableOptions& options) {
  const BackendRegistry& registry = library_kernels();
  OverrideSelection selection;
  selection.include = options.include;
  selection.exclude = options.exclude;
  selection.force_failing = options.force_failing;
  std::string results = options.results_directory;
  if (results.empty()) {
    if (const char* from_environment = std::getenv("BACKENDBENCH_RESULTS")) results = from_environment;
  }
  if (!results.empty()) selection.records = read_kernel_records(results);
  if (options.check_unverified) {
    // Per operator and device, kernels without records in order of number until one passes:
    // without timings the lowest-numbered passing kernel is the one chosen, so later ones need
    // no check.
    const auto started = std::chrono::steady_clock::now();
    const Settings settings = check_settings();
    std::map<std::string, std::vector<const OperatorSpec*>> specs_by_operator;
    for (const OperatorSpec* spec : registered_operators()) specs_by_operator[spec->display].push_back(spec);
    for (const std::string& op : registry.operators()) {
      if (!is_selected(op, options.include, options.exclude)) continue;
      std::set<bool> devices_with_a_passing_kernel;  // is_cuda
      for (const Backend* kernel : registry.for_operator(op, /*with_calibration=*/false)) {
        const bool is_cuda = kernel->device(settings).is_cuda();
        if (!kernel->dispatcher_kernel() || devices_with_a_passing_kernel.count(is_cuda)) continue;
        if (!selection.records.count({op, kernel->name()})) {
          check_kernel(*kernel, specs_by_operator[op], settings, selection.records);
          ++checked_kernels_;
        }
        const auto record = selection.records.find({op, kernel->name()});
        if (record != selection.records.end() && record->second.passed()) devices_with_a_passing_kernel.insert(is_cuda);
      }
    }
    check_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  OverridePlan plan = choose_overrides(registry, selection);
  warnings_ = std::move(plan.warnings);
  guard_ = std::make_unique<OverrideGuard>(std::move(plan.choices));
}

Enabled::~Enabled() = default;

std::vector<std::string> Enabled::registered() const { return guard_->registered(); }

std::map<std::string, OverrideCalls> Enabled::calls() const { return guard_->calls(); }

std::vector<std::string> available_kernels() {
  const BackendRegistry& registry = library_kernels();
  std::vector<std::string> lines;
  for (const std::string& op : registry.operators()) {
    for (const Backend* kernel : registry.for_operator(op, /*with_calibration=*/false)) {
      if (!kernel->dispatcher_kernel()) continue;
      lines.push_back(op + " " + kernel->name() + " " + (kernel->device(Settings()).is_cuda() ? "CUDA" : "CPU") + " (" +
                      kernel->source() + ")");
    }
  }
  return lines;
}

namespace {

// The Python package's state: at most one Enabled at a time.
std::mutex python_state_mutex;
std::unique_ptr<Enabled> python_enabled;

std::vector<std::string> python_enable(std::vector<std::string> include, std::vector<std::string> exclude,
                                       std::string results_directory, bool force_failing, bool check_unverified) {
  const std::lock_guard<std::mutex> lock(python_state_mutex);
  python_enabled.reset();  // a second enable replaces the first
  python_enabled = std::make_unique<Enabled>(
      EnableOptions{std::move(include), std::move(exclude), std::move(results_directory), force_failing, check_unverified});
  return python_enabled->warnings();
}

// What the last enable() checked: kernels, and seconds it took ((0, 0) when nothing is enabled).
std::tuple<int64_t, double> python_last_check() {
  const std::lock_guard<std::mutex> lock(python_state_mutex);
  if (!python_enabled) return {0, 0.0};
  return {python_enabled->checked_kernels(), python_enabled->check_seconds()};
}

bool python_disable() {
  const std::lock_guard<std::mutex> lock(python_state_mutex);
  const bool was_enabled = python_enabled != nullptr;
  python_enabled.reset();
  return was_enabled;
}

std::vector<std::string> python_registered() {
  const std::lock_guard<std::mutex> lock(python_state_mutex);
  return python_enabled ? python_enabled->registered() : std::vector<std::string>{};
}

// "<operator> <kernel calls> <aten calls inside kernels>" per overridden operator.
std::vector<std::string> python_calls() {
  const std::lock_guard<std::mutex> lock(python_state_mutex);
  std::vector<std::string> lines;
  if (!python_enabled) return lines;
  for (const auto& [op, counts] : python_enabled->calls()) {
    lines.push_back(op + " " + std::to_string(counts.kernel) + " " + std::to_string(counts.aten_inside_kernel));
  }
  return lines;
}

}  // namespace
}  // namespace backendbench

TORCH_LIBRARY(backendbench, m) {
  m.def("enable(str[] include, str[] exclude, str results_directory, bool force_failing, bool check_unverified) -> str[]",
        &backendbench::python_enable);
  m.def("last_check() -> (int, float)", &backendbench::python_last_check);
  m.def("disable() -> bool", &backendbench::python_disable);
  m.def("registered() -> str[]", &backendbench::python_registered);
  m.def("calls() -> str[]", &backendbench::python_calls);
  m.def("kernels() -> str[]", [] { return backendbench::available_kernels(); });
}
