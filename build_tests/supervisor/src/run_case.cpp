// The case pipeline; see run_case.h.
#include "supervisor/run_case.h"

#include <ATen/Parallel.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>

#include "supervisor/check.h"
#include "backendbench/inputs.h"
#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"
#include "backendbench/roofline.h"
#include "backendbench/tensor_values.h"
#include "backendbench/timing.h"
#include "supervisor/kernel_workers.h"

namespace backendbench {
namespace {

Verdict verdict_for(const OperatorSpec& op, const CaseSpec& spec, const Backend& backend, const Settings& settings,
                    const char* frontend) {
  Verdict verdict;
  verdict.suite = op.suite;
  verdict.op = op.display;
  verdict.case_name = spec.name;
  verdict.arguments = spec.arguments;
  verdict.trace_file = spec.file;
  verdict.trace_line = spec.line;
  verdict.count = spec.count;
  verdict.models = spec.models != nullptr ? spec.models : "";
  verdict.backend = backend.name();
  verdict.kernel_file = backend.source();
  verdict.device = backend.device(settings).str();
  verdict.gpu = settings.gpu;
  verdict.frontend = frontend;
  verdict.salt = settings.salt;
  return verdict;
}

void skip(Verdict& verdict, const std::string& reason) {
  verdict.status = Verdict::Status::kSkipped;
  verdict.skip_reason = reason;
}

void fail(Verdict& verdict, const std::string& message) {
  verdict.status = Verdict::Status::kFailed;
  verdict.errors.push_back(message);
}

// One draw; returns false when the verdict is decided (failed or skipped).
bool check_draw(const OperatorSpec& op, const CaseSpec& spec, const Backend& backend, const Settings& settings,
                const c10::OperatorHandle& handle, c10::Device device, int draw, int draws, Backend::DrawCalls& calls,
                Verdict& verdict, Stack* inputs_made, Stack* expected_made) {
  const std::string where =
      verdict.where() + (draws > 1 ? " (draw " + std::to_string(draw + 1) + " of " + std::to_string(draws) + ")" : "");
  const OperatorFacts& facts = facts_of(op.display);
  const Backend& reference = backends().reference();
  const std::string label = backend_label(backend);
  CallRecord call{handle.schema(), facts, backend, written_arguments(handle.schema(), facts.unannotated_writes)};
  Stack kernel_inputs;
  // This process's inputs and the reference's answer; false when that decides the case. A
  // backend whose kernel runs in a worker may have its call under way meanwhile.
  const auto prepare = [&]() -> bool {
    Stack reference_inputs;
    try {
      // One draw, two copies: identical values and layouts, separate storage.
      reference_inputs = materialize(handle.schema(), spec, device, draw, settings.salt);
      kernel_inputs = clone_inputs(reference_inputs);
      // To prove read-only inputs stay so. A kernel in a worker never touches these tensors: what
      // its call changed comes back in storage of its own, set into them, and views serve.
      call.kernel_inputs_before = backend.runs_in_worker() ? view_inputs(kernel_inputs) : clone_inputs(kernel_inputs);
    } catch (const std::exception& error) {
      fail(verdict, std::string("cannot make inputs for ") + where + ": " + error.what());
      return false;
    }
    if (auto reason = device_cost_limitation(facts, device, reference_inputs, settings.cpu_f16_gflop_limit)) {
      skip(verdict, "not run on " + device.str() + ": " + *reason);
      return false;
    }
    try {
      call.expected = reference.call(handle, reference_inputs, device);
      calls.expect_outputs(call.expected);
    } catch (const c10::NotImplementedError& error) {
      // No kernel of this libtorch for these inputs on this device (e.g. a cuDNN-only operator
      // on the CPU): nothing to compare against, so the case is skipped, with the reason.
      skip(verdict, "the reference aten::" + std::string(op.display) + " has no " + device.str() + " kernel for " + where +
                        ": " + error.what_without_backtrace());
      return false;
    } catch (const std::exception& error) {
      fail(verdict, "the reference aten::" + std::string(op.display) + " failed on " + where + ": " + error.what());
      return false;
    }
    call.reference_inputs = reference_inputs;
    call.kernel_inputs = kernel_inputs;
    return true;
  };
  try {
    // Observed where the backend runs: here, or in its kernel worker (kernel_workers.h).
    std::optional<Backend::ObservedCall> observed = calls.next([&] { return prepare() ? &kernel_inputs : nullptr; });
    if (!observed) return false;
    call.actual = std::move(observed->outputs);
    call.inside = std::move(observed->inside);
    call.kernels_must_compute = settings.kernels_must_compute;
    if (backend.kind() == Backend::Kind::kKernel && call.inside.aten_share >= 0) {
      verdict.aten_share = std::max(verdict.aten_share, call.inside.aten_share);
    }
  } catch (const std::exception& error) {
    fail(verdict, label + " threw on " + where + ": " + error.what());
    return false;
  }
  // The float64 reference, computed on first use by a value check that needs a second chance.
  std::optional<Stack> precise_inputs, precise_outputs;
  bool tried_precise = false;
  auto compute_precise = [&] {
    if (!tried_precise) {
      tried_precise = true;
      try {
        precise_inputs = to_double_precision(call.kernel_inputs_before);
        precise_outputs = reference.call(handle, *precise_inputs, device);
      } catch (const std::exception&) {
        precise_inputs.reset();  // no float64 kernel for these inputs: ATen's result alone decides
        precise_outputs.reset();
      }
    }
  };
  call.precise_inputs = [&]() -> const Stack* {
    compute_precise();
    return precise_inputs ? &*precise_inputs : nullptr;
  };
  call.precise_outputs = [&]() -> const Stack* {
    compute_precise();
    return precise_outputs ? &*precise_outputs : nullptr;
  };
  verdict.checks.clear();
  bool passed = true;
  for (const Check* check : registered_checks()) {
    if (!check->applies_to(backend)) continue;
    CheckFinding finding;
    try {
      finding = check->run(call);
    } catch (const std::exception& error) {
      finding.message = std::string("the check could not run: ") + error.what();
    }
    verdict.checks.push_back({check->name(), !finding.failed(), finding.message});
    if (std::string(check->name()) == "outputs") {
      if (draw == 0) {
        verdict.max_abs_error = finding.max_abs_error;
        verdict.max_rel_error = finding.max_rel_error;
      }
      if (finding.failed()) {
        fail(verdict, where + ": " + finding.message + " (max abs error " + std::to_string(finding.max_abs_error) +
                          ", max rel error " + std::to_string(finding.max_rel_error) + ")");
      }
    } else if (finding.failed()) {
      fail(verdict, label + " on " + where + ": " + finding.message);
    }
    passed = passed && !finding.failed();
  }
  if (!passed) verdict.failed_draw = draw + 1;
  // The draw's values as made, untouched: the kernel's copy went to it, the reference's to ATen;
  // and the reference's outputs on them.
  if (passed && inputs_made != nullptr) *inputs_made = std::move(call.kernel_inputs_before);
  if (passed && expected_made != nullptr) *expected_made = call.expected;
  return passed;
}

// check_case; `timed_next` tells a kernel worker that these draws are timed next, and
// `first_inputs` and `first_expected` (when given) receive the first draw's inputs as made and
// the reference's outputs on them, for timing to use.
Verdict check_case_for(const OperatorSpec& op, const CaseSpec& spec, const Backend& backend, const Settings& settings,
                       bool timed_next, Stack* first_inputs, Stack* first_expected) {
  Verdict verdict = verdict_for(op, spec, backend, settings, "tests");
  const c10::Device device = backend.device(settings);
  // First, so that a Python kernel that does not load fails on any machine.
  if (std::optional<Backend::Unusable> unusable = backend.unusable()) {
    if (unusable->skip) {
      skip(verdict, unusable->reason);
    } else {
      fail(verdict, backend_label(backend) + " cannot run: " + unusable->reason);
    }
    return verdict;
  }
  if (device.is_cuda() && !cuda_available()) {
    skip(verdict, backend.kind() == Backend::Kind::kKernel ? no_cuda_device_reason(backend.name())
                                                            : "BACKENDBENCH_DEVICE is cuda and this machine has no CUDA device");
    return verdict;
  }
  const std::string device_type = c10::DeviceTypeName(device.type(), /*lower_case=*/true);
  if (auto reason = device_limitation(facts_of(op.display), device_type, spec.arguments)) {
    skip(verdict, "not run on " + device.str() + ": " + *reason);
    return verdict;
  }
  std::optional<c10::OperatorHandle> handle;
  try {
    handle = find_operator(op);
  } catch (const std::exception& error) {
    fail(verdict, error.what());
    return verdict;
  }
  // A kernel runs on several independent draws of each case, so that one which returns
  // remembered results (a cache keyed on shapes, a static output) fails; the aten backend is
  // the reference itself and one draw validates the harness.
  const int draws = backend.kind() == Backend::Kind::kReference ? 1 : settings.draws;
  std::vector<InputDraw> recipes;
  for (int draw = 0; draw < draws; ++draw) recipes.push_back({&spec, draw, settings.salt, timed_next});
  // A worker's calls hold its pool until `calls` ends: nothing below asks a worker anything else.
  const std::unique_ptr<Backend::DrawCalls> calls = backend.call_draws(*handle, device, std::move(recipes));
  for (int draw = 0; draw < draws; ++draw) {
    verdict.draws = draw + 1;
    if (!check_draw(op, spec, backend, settings, *handle, device, draw, draws, *calls, verdict,
                    draw == 0 ? first_inputs : nullptr, draw == 0 ? first_expected : nullptr)) {
      break;
    }
  }
  return verdict;
}

}  // namespace

bool is_disqualifying_flag(const std::string& flag) {
  return flag == "suspect" || flag == "hidden_work" || flag == "wrong_when_timed" || flag == "timing_disagrees" ||
         flag == "gpu_shared";
}

Verdict check_case(const OperatorSpec& op, const CaseSpec& spec, const Backend& backend, const Settings& settings) {
  return check_case_for(op, spec, backend, settings, /*timed_next=*/false, nullptr, nullptr);
}

Verdict time_case(const OperatorSpec& op, const CaseSpec& spec, const Backend& backend, const Settings& settings,
                  Timer& timer) {
  const bool alone = backend.kind() == Backend::Kind::kReference;
  // The same checks as the tests: a case that fails any of them is not timed. A kernel worker
  // keeps the draws it made for them to time on; this process keeps the first draw's inputs.
  const auto started = std::chrono::steady_clock::now();
  const auto ms_since = [](std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
  };
  Stack first_inputs, first_expected;
  Verdict verdict = check_case_for(op, spec, backend, settings, /*timed_next=*/backend.runs_in_worker(),
                                   backend.runs_in_worker() ? &first_inputs : nullptr,
                                   backend.runs_in_worker() ? &first_expected : nullptr);
  verdict.frontend = "bench";
  verdict.time_spent.emplace();
  verdict.time_spent->checks_ms = ms_since(started);
  if (!verdict.passed()) return verdict;
  const c10::Device device = backend.device(settings);
  const OperatorFacts& facts = facts_of(op.display);
  const c10::OperatorHandle handle = find_operator(op);
  const std::string label = backend_label(backend);
  try {
    // A kernel worker makes both draws itself; this process times the reference on the first.
    std::vector<Stack> value_sets = {first_inputs.empty() ? materialize(handle.schema(), spec, device, 0, settings.salt)
                                                          : std::move(first_inputs)};
    if (!alone && !backend.runs_in_worker()) value_sets.push_back(materialize(handle.schema(), spec, device, 1, settings.salt));
    // Measured where the backend runs: a kernel worker's figures are bounded here (kernel_workers.h).
    const std::vector<InputDraw> drawn_from = {{&spec, 0, settings.salt}, {&spec, 1, settings.salt}};
    const auto measurement_started = std::chrono::steady_clock::now();
    const Measurement measured = backend.runs_in_worker()
                                     ? measure_in_worker(op.display, handle, backend, device, value_sets, drawn_from,
                                                         settings, verdict.where(),
                                                         first_expected.empty() ? nullptr : &first_expected)
                                     : measure_case(op.display, handle, backend, device, value_sets, timer, verdict.where());
    // The memory of its calls back to back (draws, outputs, the reference's run) back to the device.
    if (backend.runs_in_worker()) release_cached_device_memory(device);
    verdict.time_spent->measurement_ms = ms_since(measurement_started);
    verdict.time_spent->bound_ms = measured.bound_ms;
    for (const std::string& flag : measured.flags) verdict.flags.push_back(flag);
    for (const std::string& error : measured.errors) fail(verdict, error);
    TimingFigures figures = measured.figures;
    const double seconds = figures.kernel_us / 1e6;
    // Roofline, computed here from the reference's own outputs: achieved GB/s and TFLOP/s, % of
    // the device's peaks, and two flags: `suspect` (faster than the bytes or FLOPs allow at
    // peak: the kernel cannot have done the work) and `overhead_dominated` (within 1.3× of an
    // empty launch: the time is launch overhead).
    if (seconds > 0 && measured.errors.empty()) {
      const Stack expected = measured.reference_outputs
                                 ? *measured.reference_outputs
                                 : backends().reference().call(handle, clone_inputs(value_sets[0]), device);
      const Work work = work_of(facts, value_sets[0], expected);
      const Peaks peaks = device_peaks(device, work.dtype, settings);
      figures.bytes = work.bytes;
      figures.flops = work.flops;
      figures.gbps = work.bytes / seconds / 1e9;
      figures.tflops = work.flops / seconds / 1e12;
      if (peaks.bytes_per_second > 0) figures.pct_peak_bw = 100 * work.bytes / seconds / peaks.bytes_per_second;
      if (peaks.flops_per_second > 0) figures.pct_peak_flops = 100 * work.flops / seconds / peaks.flops_per_second;
      const double reference_seconds =
          (backend.runs_in_worker() ? measured.supervisor_reference_us : figures.reference_us) / 1e6;
      if (suspect_time(work, seconds, reference_seconds, peaks)) verdict.flags.push_back("suspect");
      const double launch_overhead = figures.launch_overhead_us / 1e6;
      if (launch_overhead > 0 && seconds < 1.3 * launch_overhead) verdict.flags.push_back("overhead_dominated");
    }
    if (measured.errors.empty()) verdict.timing = figures;
    for (const std::string& flag : verdict.flags) {
      // wrong_when_timed, timing_disagrees and gpu_shared come with their own error already.
      if (is_disqualifying_flag(flag) && flag != "wrong_when_timed" && flag != "timing_disagrees" && flag != "gpu_shared" &&
          !alone) {
        fail(verdict, label + " on " + verdict.where() + ": flagged " + flag + "; it does not count as a speedup");
      }
    }
  } catch (const std::exception& error) {
    fail(verdict, label + " failed while timed on " + verdict.where() + ": " + error.what());
  }
  return verdict;
}

}  // namespace backendbench
