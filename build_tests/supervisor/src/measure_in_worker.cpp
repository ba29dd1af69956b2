// A kernel worker's timing, judged and bounded by the supervisor; see kernel_workers.h.
#include "supervisor/kernel_workers.h"
#include "worker_pool.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <fcntl.h>
#include <sched.h>

#include <algorithm>
#include <thread>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "backendbench/backend.h"
#include "backendbench/compare.h"
#include "protocol/device_share.h"
#include "backendbench/files.h"
#include "backendbench/inputs.h"
#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"
#include "backendbench/processes.h"
#include "backendbench/roofline.h"
#include "backendbench/tensor_values.h"
#include "backendbench/timing.h"
#include "protocol/memory_file.h"
#include "protocol/worker_protocol.h"

namespace backendbench {
namespace {

using nlohmann::json;
using worker::call_request;
using worker::draw_json;
using worker::request_header;

json timing_settings(const Settings& settings) {
  return {{"min_samples", settings.stopping.min_samples},
          {"max_samples", settings.stopping.max_samples},
          {"target_relative_error", settings.stopping.target_relative_error},
          {"seconds_cap", settings.stopping.seconds_cap},
          {"flush", settings.layout.flush == SamplingLayout::Flush::kWrite ? "write" : "read"},
          {"flush_bytes", settings.layout.flush_bytes},
          {"batch_pairs", settings.layout.batch_pairs}};
}


// The GPU still busy when this process was to time the reference, the timed kernel's worker
// stopped (worker_pool.h, gpu_idle_within): work the worker left running there.
// Where another program holds the GPU (gpu_holders.h), the case says so and fails as gpu_shared.
struct GpuLeftBusy : std::runtime_error {
  explicit GpuLeftBusy(const GpuHoldersSaid& holders)
      : std::runtime_error("the GPU was still busy " + std::to_string(static_cast<int>(kGpuLeftWorkSeconds * 1e3)) +
                           " ms after its worker was stopped for the supervisor's timing of the reference" +
                           (holders.other_programs ? ": " + holders.text
                                                   : ": work the kernel left running there would slow the reference its "
                                                     "speedup is measured against" +
                                                         (holders.text.empty() ? "" : " (" + holders.text + ")"))),
        other_programs(holders.other_programs) {}
  bool other_programs;
};

void require_idle_gpu(c10::Device device, pid_t timed_worker) {
  if (device.is_cuda() && !gpu_idle_within(kGpuLeftWorkSeconds)) throw GpuLeftBusy(gpu_holders_now(timed_worker));
}

// Whether a CUDA case's calls are bounded in full (kernel_workers.h, kBoundedCallSeconds): by
// the kernel's claim or the reference's, kBoundedCallSeconds or more. Shorter ones are bounded
// loosely, and their reference figure is not counted within this process's own.
bool long_cuda_calls(c10::Device device, const TimingFigures& f) {
  return device.is_cuda() && std::max(f.kernel_us, f.reference_us) / 1e6 >= kBoundedCallSeconds;
}

// Counts `measured`'s speedup scaled by `factor`, flagged `flag` (the figure the supervisor's
// own clock gave it), and decides speedup_review again on the speedup counted.
void count_scaled_speedup(Measurement& measured, double factor, const char* flag) {
  scale_speedup(measured.figures, factor);
  measured.flags.push_back(flag);
  measured.flags.erase(std::remove(measured.flags.begin(), measured.flags.end(), "speedup_review"), measured.flags.end());
  if (measured.figures.speedup > kSpeedupReviewThreshold) measured.flags.push_back("speedup_review");
}

// The reference as this process times it, for the bound on a worker's figure. A bound of 2x needs
// a median within a few per cent, not the 0.3 % of a timing. On CUDA, where events time the device
// alone and every sample starts after the same cache flush, it is the median of 4 samples (one
// call each, as the worker's are) in one batch: one synchronisation and 7 flushes of the L2.
// 16 interleaved pairs cost 5 ms a case, 7 % of ./bench's time on the 914-case subset (H200), 8
// samples in two batches 3.4 ms. A sample read low only tightens the bound for one attempt (a
// disagreeing measurement is taken again); one read high is outvoted by the other three.
//
// On a CPU the partner is not the reference but one core kept busy for as long as the worker says
// its kernel took (`kernel_us`): an honest single-threaded kernel leaves ATen's thread pool asleep,
// and the reference after it pays for waking it (on 16 cores a 1024x1024 relu read 33 us beside
// itself and 66-77 us beside such a kernel, more than the 2x allowed). A kernel that claims to be
// slower to loosen this bound gives up as much speedup.
struct SupervisorReference {
  double us = 0;
  std::vector<c10::IValue> outputs;  // the reference's last result on `values`
};

SupervisorReference supervisor_reference(const std::string& op_display, const c10::OperatorHandle& handle,
                                         c10::Device device, const std::vector<c10::IValue>& values,
                                         const Settings& settings, double kernel_us, pid_t timed_worker) {
  // One timer per device, never destroyed (see bench_main.cpp: CUDA unloads before statics).
  static auto* timers = new std::map<std::string, std::unique_ptr<Timer>>;
  std::unique_ptr<Timer>& timer = (*timers)[device.str()];
  if (!timer) {
    // On a CPU, whose cores the machine's other work shares, a short run read a reference 2.8x
    // faster than the worker's (on the 2-core machine during a build): there it gets the
    // timing's own rule, interleaved with a partner (below).
    StoppingRule rule = settings.stopping;
    SamplingLayout layout = settings.layout;
    if (device.is_cuda()) rule.min_samples = rule.max_samples = layout.batch_pairs = 4;
    timer = std::make_unique<Timer>(device, rule, layout);
  }
  // The timed kernel's worker does not run meanwhile (the others are stopped already,
  // measure_in_worker): its threads would slow this reference as much as its worker's, and the
  // bound would agree with a forged speedup.
  const processes::Stopped quiet({timed_worker});
  require_idle_gpu(device, timed_worker);
  // `values` are this process's own (time_case's); the reference writes only what its schema
  // says it writes, and those calls get copies.
  const bool writes_inputs = !written_arguments(handle.schema(), facts_of(op_display).unannotated_writes).empty();
  auto fresh = [&] { return writes_inputs ? clone_inputs(values) : values; };
  const BoundCall reference = backends().reference().bind(handle, values, device);
  // No warm-up on CUDA: this process called the reference on this case's shapes in its checks
  // just before, and a first sample read high is outvoted by the other three.
  if (!device.is_cuda()) reference(fresh());
  // Each side's last result kept alive, as measure_case keeps them: a result freed at once hands
  // its block back hot to the next call, which on a CPU read a 1024x1024 relu 3.5x faster.
  std::vector<c10::IValue> last_first;
  const auto first = [&](std::vector<c10::IValue> stack) { return last_first = reference(std::move(stack)); };
  const auto busy = std::chrono::duration<double, std::micro>(std::clamp(kernel_us, 0.0, 20000.0));
  const auto one_core_busy = [&](std::vector<c10::IValue>) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(busy);
    while (std::chrono::steady_clock::now() < until) {
    }
    return std::vector<c10::IValue>();
  };
  SupervisorReference measured;
  if (device.is_cuda()) {
    measured.us = timer->sample_one(fresh, first).median_seconds() * 1e6;
  } else {
    // The 10th percentile, not the median: on a busy CPU the scheduler only ever adds time, and a
    // median taken while other processes shared the 2 cores read a 1024x1024 relu at 5.5 ms
    // instead of 0.5 ms, loose enough to let a reference slowed 40x in the worker through.
    measured.us = timer->sample_interleaved(fresh, first, one_core_busy).reference.quantile_seconds(0.1) * 1e6;
  }
  measured.outputs = std::move(last_first);
  return measured;
}

// A case's value sets in a request: how each was made (`value_sets`: recipes the worker makes the
// same values from), or, where nothing says, the values themselves, as the payload it returns.
std::vector<char> put_value_sets(json& header, const std::vector<std::vector<c10::IValue>>& value_sets,
                                 const std::vector<InputDraw>& drawn_from) {
  if (!drawn_from.empty()) {
    header["value_sets"] = json::array();
    for (const InputDraw& drawn : drawn_from) header["value_sets"].push_back(draw_json(drawn));
    return {};
  }
  std::vector<c10::IValue> sets;
  for (const auto& set : value_sets) sets.push_back(c10::ivalue::Tuple::create(set));
  return worker::save_values(sets);
}

// This process's own view of a case's value sets: the inputs of each (made here from its recipe
// where they were not given) and the reference's outputs on them, each made once, and a kernel's
// outputs judged against them with the checks' float64 second chance.
class SupervisorValues {
 public:
  SupervisorValues(const std::string& op_display, const c10::OperatorHandle& handle, c10::Device device,
                   const std::vector<std::vector<c10::IValue>>& value_sets, const std::vector<InputDraw>& drawn_from,
                   const std::vector<c10::IValue>* checked_outputs)
      : handle_(handle), device_(device), given_(value_sets), drawn_from_(drawn_from), checked_outputs_(checked_outputs),
        options_(compare_options_for(facts_of(op_display))) {}

  size_t count() const { return std::max(given_.size(), drawn_from_.size()); }

  const std::vector<c10::IValue>& inputs(size_t set) {
    auto found = inputs_.find(set);
    if (found != inputs_.end()) return found->second;
    std::vector<c10::IValue> made;
    if (set < given_.size()) {
      made = given_[set];
    } else {
      const InputDraw& drawn = drawn_from_.at(set);
      made = materialize(handle_.schema(), *drawn.spec, device_, drawn.draw, drawn.salt);
    }
    return inputs_.emplace(set, std::move(made)).first->second;
  }

  const std::vector<c10::IValue>& reference(size_t set) {
    auto found = references_.find(set);
    if (found != references_.end()) return found->second;
    std::vector<c10::IValue> want = set == 0 && checked_outputs_ != nullptr
                                        ? *checked_outputs_
                                        : backends().reference().call(handle_, clone_inputs(inputs(set)), device_);
    return references_.emplace(set, std::move(want)).first->second;
  }

  Comparison compare(size_t set, const std::vector<c10::IValue>& got) {
    return compare_with_second_chance(reference(set), got, options_,
                                      [&, precise = std::optional<std::vector<c10::IValue>>()]() mutable
                                      -> const std::vector<c10::IValue>* {
                                        try {
                                          precise = backends().reference().call(handle_, to_double_precision(inputs(set)), device_);
                                        } catch (const std::exception&) {
                                          return nullptr;
                                        }
                                        return &*precise;
                                      });
  }

 private:
  const c10::OperatorHandle& handle_;
  c10::Device device_;
  const std::vector<std::vector<c10::IValue>>& given_;
  const std::vector<InputDraw>& drawn_from_;
  const std::vector<c10::IValue>* checked_outputs_;
  CompareOptions options_;
  std::map<size_t, std::vector<c10::IValue>> inputs_, references_;
};

// The outputs the worker's kernel gave while timed (each batch's last, TimedOutputSampler; the
// answer's "timed_outputs" says which batch and value set each is), judged here. Returns why the
// first that differs does ("" when none does); throws std::runtime_error for a malformed answer
// (none though pairs were timed, a count or value set that does not fit).
std::string judge_timed_outputs(const json& measurement, const std::vector<char>& payload,
                                const device_share::Imports* imports, SupervisorValues& values, int batch_pairs) {
  const json& batches = measurement.at("timed_outputs");
  if (!batches.is_array()) throw std::runtime_error("timed_outputs is not a list");
  const bool timed = !measurement.at("kernel_samples").empty();
  if (timed && batches.empty()) throw std::runtime_error("no timed outputs came back with the samples");
  if (batches.empty()) return "";
  const std::vector<c10::IValue> outputs = worker::load_values(payload, imports);
  if (outputs.size() != batches.size()) throw std::runtime_error("timed outputs of another count than their batches");
  // Which batches ran, and on which value set, follow from the samples (measure_case: batches of
  // batch_pairs pairs, the value sets in turn), not from the worker's word: the batches it names
  // must be in order, the last among them, each on its own value set.
  const size_t ran = measurement.at("kernel_samples").size() / static_cast<size_t>(std::max(1, batch_pairs));
  for (size_t i = 0; i < batches.size(); ++i) {
    const json& entry = batches[i];
    const bool well_formed = entry.is_array() && entry.size() == 2 && entry[0].is_number_unsigned() &&
                             entry[1].is_number_unsigned() && outputs[i].isTuple();
    const size_t batch = well_formed ? entry[0].get<size_t>() : 0;
    if (!well_formed || batch >= ran || (i > 0 && batch <= batches[i - 1][0].get<size_t>()) ||
        (i + 1 == batches.size() && batch + 1 != ran) || entry[1].get<size_t>() != batch % values.count()) {
      throw std::runtime_error("a timed output that is not [batch, value set] of this case's batches, in order and with the last");
    }
    const auto& elements = outputs[i].toTupleRef().elements();
    const std::vector<c10::IValue> got(elements.begin(), elements.end());
    const Comparison comparison = values.compare(batch % values.count(), got);
    if (!comparison.equal) {
      return comparison.message + " (the last call of timed batch " + std::to_string(batch + 1) +
             ", judged by the supervisor)";
    }
  }
  return "";
}

// The inputs of one back-to-back run: a draw of its own for every call, from
// kBackToBackFirstDraw on, under a salt drawn here for this run alone (kernel_workers.h): values
// the kernel never saw, handed to the worker in a memory file (on CUDA, where the shared path is not
// used, made by the worker from the first's recipe: prepare_run).
struct BackToBackDraws {
  InputDraw first;
  std::vector<std::vector<c10::IValue>> inputs;  // one stack a call, made as a CUDA worker makes them
};

BackToBackDraws back_to_back_draws(const c10::OperatorHandle& handle, c10::Device device, const CaseSpec& spec,
                                   int64_t calls) {
  std::random_device entropy;
  const uint64_t salt = (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  BackToBackDraws made{InputDraw{&spec, kBackToBackFirstDraw, salt}, {}};
  for (int64_t i = 0; i < calls; ++i) {
    made.inputs.push_back(materialize(handle.schema(), spec, device, kBackToBackFirstDraw + static_cast<int>(i), salt));
  }
  return made;
}

// A run's inputs as they reach its worker (memory_file.h; on CUDA device_share.h:
// DeviceMemoryFile): their values' head, sent with `prepare_run`, and the memory file their
// storages go in, written only while every process of the worker's is stopped, right before this
// process's clock starts.
struct RunInputsFile {
  RunInputsFile(const std::vector<std::vector<c10::IValue>>& inputs, c10::Device device) : split(tuples_of(inputs)) {
    if (device.is_cuda()) {
      // A CUDA run whose inputs hold no CUDA storage (host tensors alone, or no tensor at all)
      // has nothing for device memory: it is made from the recipe, as one with host tensors too.
      if (!split.device().is_cuda()) throw worker::ProtocolError("a CUDA run without a CUDA storage among its inputs");
      on_device = device_share::DeviceMemoryFile::create(split.file_bytes(), split.device());
    } else {
      on_host = worker::MemoryFile::create(split.file_bytes());
    }
  }
  static std::vector<c10::IValue> tuples_of(const std::vector<std::vector<c10::IValue>>& inputs) {
    std::vector<c10::IValue> tuples;
    for (const std::vector<c10::IValue>& stack : inputs) tuples.push_back(c10::ivalue::Tuple::create(stack));
    return tuples;
  }
  uint64_t bytes() const { return on_device ? on_device->bytes() : on_host->bytes(); }
  int descriptor() const { return on_device ? on_device->descriptor() : on_host->descriptor(); }
  // Writes the values (on CUDA by a kernel, waited for: worker_protocol.h, SplitValues).
  void write() const { split.write_storages(on_device ? on_device->data() : on_host->data()); }

  worker::SplitValues split;
  std::shared_ptr<worker::MemoryFile> on_host;
  std::shared_ptr<device_share::DeviceMemoryFile> on_device;
};

// A key for a run's digests, drawn here for each (worker_protocol.h: output_digests).
uint64_t digest_key() {
  std::random_device entropy;
  return (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
}

// Seconds of one run of the reference back to back in this process, a call on each stack of
// `inputs` (which it takes), every call's outputs kept as the kernel's worker keeps its own, every
// device synchronised before and after: the reference's side of the speedup both sides get back
// to back (bound_by_back_to_back runs it in turns with the kernel's and keeps the fastest).
double reference_back_to_back(const c10::OperatorHandle& handle, c10::Device device,
                              std::vector<std::vector<c10::IValue>> inputs, const std::vector<uint64_t>& output_blocks,
                              pid_t timed_worker) {
  const BoundCall reference = backends().reference().bind(handle, inputs.at(0), device);
  ready_output_blocks(device, output_blocks, static_cast<int64_t>(inputs.size()));  // as the worker's prepare_run
  const processes::Stopped quiet({timed_worker});  // as supervisor_reference
  require_idle_gpu(device, timed_worker);
  std::vector<std::vector<c10::IValue>> outputs;
  outputs.reserve(inputs.size());
  synchronize_all_devices();
  const auto started = std::chrono::steady_clock::now();
  for (std::vector<c10::IValue>& stack : inputs) outputs.push_back(reference(std::move(stack)));
  synchronize_all_devices();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

// The bytes of each output storage of one call, from the reference's outputs on the case's values.
std::vector<uint64_t> output_blocks_of(const std::vector<c10::IValue>& outputs) {
  std::vector<uint64_t> blocks;
  for (const at::Tensor& tensor : tensors_in(outputs)) {
    if (tensor.defined() && tensor.has_storage()) blocks.push_back(tensor.storage().nbytes());
  }
  return blocks;
}

// What judge_run_outputs found: the flag and error of the first call whose outputs fail ("" where
// none does), and how long this process took to digest the outputs it fetched (the same bytes
// the worker digested: the yardstick of its digests' time, counted_run_seconds).
struct RunJudgement {
  std::string flag, error;
  double digests_seconds = 0;
};

// Every call's outputs of the kernel's last run, fetched a chunk at a time, each matched to the
// digests its run's answer carried and judged with this process's reference on that call's values.
// Throws std::runtime_error for a malformed answer.
RunJudgement judge_run_outputs(WorkerPoolRequests& pool, const WorkerPoolRequests::Key& key, const std::string& op_display,
                               const c10::OperatorHandle& handle, c10::Device device,
                               const std::vector<std::vector<c10::IValue>>& inputs, const json& digests, uint64_t digest_key,
                               uint64_t call_output_bytes, size_t call_output_tensors) {
  const auto fail_on = [](const json& answer) {
    if (answer.contains("error") && answer["error"].is_string()) throw std::runtime_error(answer["error"].get<std::string>());
  };
  const size_t calls = inputs.size();
  if (!digests.is_array() || digests.size() != calls) {
    throw std::runtime_error("the kernel worker's answer to 'run_digests' is malformed: not one list of digests a call");
  }
  const size_t chunk = static_cast<size_t>(run_output_chunk(call_output_bytes, call_output_tensors));
  RunJudgement judged;
  for (size_t first = 0; first < calls; first += chunk) {
    const size_t count = std::min(chunk, calls - first);
    json request = request_header("run_output");
    request["first"] = first;
    request["count"] = count;
    std::vector<char> payload;
    fail_on(pool.request(key, request, {}, &payload, kAnswerSlackBytes + kAnswerMultiple * call_output_bytes * count));
    const std::vector<c10::IValue> fetched = worker::load_values(payload, device.is_cuda() ? &pool.gpu_imports(key.second) : nullptr);
    if (fetched.size() != count) throw std::runtime_error("the kernel worker's run outputs are malformed: another count than asked");
    for (size_t i = 0; i < count; ++i) {
      if (!fetched[i].isTuple()) throw std::runtime_error("the kernel worker's run outputs are malformed");
      const auto& elements = fetched[i].toTupleRef().elements();
      const std::vector<c10::IValue> got(elements.begin(), elements.end());
      const size_t call = first + i;
      const auto digesting = std::chrono::steady_clock::now();
      const std::vector<int64_t> digest = worker::output_digests(got, digest_key);
      judged.digests_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - digesting).count();
      if (!digests[call].is_array() || json(digest) != digests[call]) {
        judged.flag = "timing_disagrees";
        judged.error = "called back to back, its worker answered before the outputs of call " + std::to_string(call + 1) +
                       " of " + std::to_string(calls) +
                       " were what it then sent (their digests differ): the work was not done when the supervisor's clock "
                       "stopped";
        return judged;
      }
      const std::vector<std::vector<c10::IValue>> one = {inputs[call]};
      const std::vector<InputDraw> given;  // the values above, not recipes
      SupervisorValues values(op_display, handle, device, one, given, nullptr);
      const Comparison comparison = values.compare(0, got);
      if (!comparison.equal) {
        judged.flag = "wrong_when_timed";
        judged.error = "right when checked but wrong when called back to back (call " + std::to_string(call + 1) + " of " +
                       std::to_string(calls) + "): " + comparison.message + " (judged by the supervisor)";
        return judged;
      }
    }
  }
  return judged;
}

// The speedup bounded on both sides by this process's clock (worker.h, kBackToBackSeconds):
// adds its error, or counts the back-to-back figures, in `measured`.
void bound_by_back_to_back(Measurement& measured, const std::string& op_display, const c10::OperatorHandle& handle,
                           const Backend& backend, c10::Device device, SupervisorValues& values,
                           const std::vector<InputDraw>& drawn_from, const std::string& where, const Settings& settings) {
  TimingFigures& f = measured.figures;
  const double claimed = f.kernel_us / 1e6;
  // On CUDA a case whose calls are shorter than kBoundedCallSeconds, by the kernel's claim and the
  // reference's (bounded above by this process), is bounded loosely and only where its speedup
  // gains (kernel_workers.h, kCudaShortCallCheckedSpeedup): back to back such calls are bound by
  // their launches and the requests' round trip, not by their work.
  const bool short_cuda_calls = device.is_cuda() && !long_cuda_calls(device, f);
  if (short_cuda_calls && !(f.speedup > kCudaShortCallCheckedSpeedup)) return;
  if (drawn_from.empty()) throw std::runtime_error("a timed case without its draws' recipes: no calls back to back can be drawn");
  const CaseSpec& spec = *drawn_from.front().spec;
  int64_t calls = back_to_back_calls(claimed, stack_bytes(values.inputs(0)), stack_bytes(values.reference(0)),
                                     back_to_back_budget_bytes(device.is_cuda(), cuda_device_facts(device).memory_bytes));
  if (short_cuda_calls) calls = std::min(calls, kMostCudaShortCallBackToBackCalls);
  const std::string label = backend.name() + " (" + backend.source() + ")";
  WorkerPoolRequests pool;
  const WorkerPoolRequests::Key key = WorkerPoolRequests::key_of(backend, device);
  const auto fail_on = [](const json& answer) {
    if (answer.contains("error") && answer["error"].is_string()) throw std::runtime_error(answer["error"].get<std::string>());
  };
  double fastest = std::numeric_limits<double>::infinity(), fastest_reference = fastest;
  // On CUDA, calls back to back within the kernel's claim end the bound (worker.h); not short
  // calls, whose launches the allowance must forgive (a forged claim of a fifth was within it),
  // nor a reference counted at this process's own figure (back_to_back_ends_within_claim).
  const bool by_allowance = back_to_back_ends_within_claim(
      device.is_cuda(), short_cuda_calls,
      std::find(measured.flags.begin(), measured.flags.end(), "supervisor_reference_time") != measured.flags.end());
  double allowed = 0;  // once the worker's round trip is known, after its first run
  const auto within_claim = [&] { return by_allowance && fastest <= allowed; };
  // The reference's side, a call: its fastest run here.
  const auto reference_call = [&] { return fastest_reference / static_cast<double>(calls); };
  const auto verdict = [&] {
    const double kernel_call = fastest / static_cast<double>(calls), reference = reference_call();
    return judge_back_to_back(f.speedup, reference / kernel_call, std::max(kernel_call, reference), device.is_cuda());
  };
  const size_t output_tensors = tensors_in(values.reference(0)).size();
  const std::vector<uint64_t> output_blocks = output_blocks_of(values.reference(0));
  for (int attempt = 0; attempt < kBackToBackTries && !within_claim() && (attempt == 0 || verdict() != BackToBack::kAgrees);
       ++attempt) {
    // On a CPU the reference's runs on both sides of the kernel's: one run back to back can read
    // slow by the machine's noise alone, and a slow yardstick lets a forged kernel time agree as
    // much (on the idle 2-core machine the clock-patching relu's 2.84x paired once passed beside
    // 3.97x back to back). This one on draws of its own.
    if (!device.is_cuda()) {
      fastest_reference = std::min(fastest_reference, reference_back_to_back(handle, device,
                                                                             back_to_back_draws(handle, device, spec, calls).inputs,
                                                                             output_blocks, pool.worker_pid(key)));
    }
    // Fresh draws for every run: a run's values seen once are never timed again.
    BackToBackDraws draws = back_to_back_draws(handle, device, spec, calls);
    json prepare = call_request("prepare_run", op_display, backend.name(), handle, device);
    prepare["calls"] = calls;
    prepare["output_bytes"] = output_blocks;
    // The worker gets the calls' inputs in a memory file that is still empty, and no process of
    // its sees their values before the clock starts (memory_file.h; on CUDA device_share.h's
    // DeviceMemoryFile, with the worker's processes locked): a kernel that computes its answers
    // as they appear does that work while timed. On CUDA only where the worker's shared path was
    // timed before its kernel loaded (worker_pool.h, run_inputs_path: the settings ask for it,
    // memory can be shared, no MPS runs processes' kernels side by side, the driver can lock
    // processes) and no call has host tensors too; otherwise the worker makes them from the
    // first's recipe, and what it can do before the clock is bounded by the run's floor below.
    const WorkerPoolRequests::RoundTrip path = pool.run_inputs_path(key);
    if (device.is_cuda() && path.least_seconds == WorkerPoolRequests::kRunInputsPathRefused) {
      measured.flags.push_back("timing_disagrees");
      measured.errors.push_back(label + " on " + where +
                                ": its worker's shared path for a run's inputs could not be timed before its kernel loaded (no "
                                "device memory for the probe, or its processes not held): the run cannot be timed");
      return;
    }
    std::optional<RunInputsFile> in_file;
    if (device.is_cpu() || path.least_seconds >= 0) {
      try {
        in_file.emplace(draws.inputs, device);
      } catch (const worker::ProtocolError&) {
        if (device.is_cpu()) throw;  // on CUDA a call with host tensors: made from the recipe
      }
    }
    if (!in_file) {
      prepare["value_sets"] = json::array({draw_json(draws.first)});
      fail_on(pool.request(key, prepare, {}, nullptr));
    } else {
      prepare["memory_file_bytes"] = in_file->bytes();
      fail_on(pool.request(key, prepare, in_file->split.head(), nullptr, worker::kMaxPayloadBytes, {in_file->descriptor()}));
    }
    json digests_request = request_header("run_digests");
    digests_request["key"] = digest_key();
    auto started = std::chrono::steady_clock::now();
    if (in_file && in_file->on_device) {
      // On CUDA the worker's processes are locked first (worker_pool.h, hand_over_run_inputs): none
      // of their CUDA calls runs until the clock runs, and the GPU must be idle before the values
      // are written. A kernel left running there (watching for the values to arrive) is refused the run.
      const RunInputsHandOver handed = hand_over_run_inputs(pool.worker_pid(key), [&] { in_file->write(); });
      if (!handed.refused.empty()) {
        measured.flags.push_back(handed.holders.other_programs ? "gpu_shared" : "timing_disagrees");
        measured.errors.push_back(
            label + " on " + where + ": " +
            (handed.holders.other_programs
                 ? "the GPU was busy when its run's inputs were to be written: " + handed.holders.text
             : handed.work_left
                 ? "its worker's work was still running on the GPU when its run's inputs were to be written (" +
                       handed.refused + "): a kernel left running before the clock starts, as one that "
                       "watches for the inputs to arrive; the run cannot be timed" +
                       (handed.holders.text.empty() ? "" : " (" + handed.holders.text + ")")
                 : "its worker's processes could not be held while its run's inputs were written (" + handed.refused +
                       "): the run cannot be timed"));
        return;
      }
      started = handed.clock_started;
    } else if (in_file) {
      std::optional<processes::Stopped> stopped(std::vector<pid_t>{pool.worker_pid(key)});
      if (!stopped->whole()) {
        measured.flags.push_back("timing_disagrees");
        measured.errors.push_back(label + " on " + where +
                                  ": its worker's processes could not all be stopped while its run's inputs were written "
                                  "(one forking without end, or held by a debugger): the run cannot be timed");
        return;
      }
      in_file->write();
      started = std::chrono::steady_clock::now();
    }  // the worker's processes go on once the clock runs (`stopped` ends)
    const json ran = pool.request(key, request_header("run"), {}, nullptr);
    const auto answered = std::chrono::steady_clock::now();
    fail_on(ran);
    const json digested = pool.request(key, digests_request, {}, nullptr);
    const auto digests_done = std::chrono::steady_clock::now();
    fail_on(digested);
    // The last call ran on the last draw; the worker must say the same.
    if (ran.value("value_set", json()) != json(calls - 1) || !digested.contains("digests")) {
      throw std::runtime_error("the kernel worker's answers to 'run' and 'run_digests' are malformed: not the last call's value set, or no digests");
    }
    const RunJudgement judged = judge_run_outputs(pool, key, op_display, handle, device, draws.inputs, digested.at("digests"),
                                                  digests_request.at("key").get<uint64_t>(), stack_bytes(values.reference(0)),
                                                  output_tensors);
    if (!judged.flag.empty()) {
      measured.flags.push_back(judged.flag);
      measured.errors.push_back(label + " on " + where + ": " + judged.error);
      return;
    }
    // The kernel's run less its worker's round trip, and on CUDA's shared path less the path's
    // own cost, both timed before the kernel loaded (worker_pool.h): the supervisor's own
    // reference run has neither, and an honest kernel's calls back to back were otherwise read
    // slower than they are (by 0.1 ms of round trip; by 0.3-0.5 ms of unlock, continue and the
    // GPU's switch between contexts on an H100's shared path).
    const WorkerPoolRequests::RoundTrip trip = pool.round_trip(key);
    if (trip.least_seconds < 0) throw std::runtime_error("the kernel worker ended after its run back to back");
    fastest = std::min(fastest, net_run_seconds(counted_run_seconds(std::chrono::duration<double>(answered - started).count(),
                                                                    std::chrono::duration<double>(digests_done - answered).count(),
                                                                    judged.digests_seconds),
                                                trip.least_seconds, in_file && in_file->on_device ? path.least_seconds : -1));
    if (by_allowance) allowed = back_to_back_allowance(claimed, calls, trip.median_seconds - trip.least_seconds);
    if (within_claim()) break;
    // The reference's run right after the kernel's, in turns: a busy machine slows both alike
    // (timed apart, on the 2-core machine under the full suite, an honest relu read 0.98x paired
    // and 0.40x back to back, its reference's runs in a quiet moment and its own in a busy one).
    // It takes the draws' inputs: each call's are its own, so one that writes them needs no copy.
    // (Not the run's memory file on CUDA: over this process's own mapping of it an honest relu's
    // reference read 182 us a call, and the kernel's calls over the worker's import of it 203 us;
    // over the caching allocator's the reference read 182-198 us; H100, 8192x8192.)
    fastest_reference = std::min(fastest_reference, reference_back_to_back(handle, device, std::move(draws.inputs), output_blocks,
                                                                           pool.worker_pid(key)));
  }
  // Faster than the machine can do the work: done before the clock started. Judged against the
  // reference's run too (on CUDA the kernel's run may have ended the loop before any).
  const Work work = work_of(facts_of(op_display), values.inputs(0), values.reference(0));
  const double floor = run_floor_seconds(work, calls, device_peaks(device, work.dtype, settings),
                                         device.is_cpu() ? static_cast<double>(last_level_cache_bytes()) : 0.0);
  if (fastest < floor) {
    if (!std::isfinite(fastest_reference)) {
      fastest_reference = reference_back_to_back(handle, device, back_to_back_draws(handle, device, spec, calls).inputs,
                                                 output_blocks, pool.worker_pid(key));
    }
    if (fastest_reference >= floor) {
      measured.flags.push_back("timing_disagrees");
      measured.errors.push_back(label + " on " + where + ": " + std::to_string(calls) + " calls back to back took " +
                                std::to_string(fastest * 1e6) + " us by the supervisor's clock, less than the " +
                                std::to_string(floor * 1e6) + " us this machine needs for their work beyond its peaks (" +
                                std::to_string(calls) +
                                " calls of " + std::to_string(work.bytes / 1e6) + " MB; the reference's run took " +
                                std::to_string(fastest_reference * 1e6) +
                                " us): the work was done before the clock started, while the calls' inputs were made");
      return;
    }
  }
  if (within_claim()) return;
  const double per_call = fastest / static_cast<double>(calls), reference_per_call = reference_call();
  const double back_to_back_speedup = reference_per_call / per_call;
  f.back_to_back_speedup = back_to_back_speedup;
  switch (verdict()) {
    case BackToBack::kAgrees:
      return;
    case BackToBack::kDisagrees:
      measured.flags.push_back("timing_disagrees");
      measured.errors.push_back(label + " on " + where + ": its worker timed the kernel at " + std::to_string(f.kernel_us) +
                                " us a call and the reference at " + std::to_string(f.reference_us) + " us (" +
                                std::to_string(f.speedup) + "x), but " + std::to_string(calls) + " calls back to back took " +
                                std::to_string(per_call * 1e6) + " us a call by the supervisor's clock, the reference's " +
                                std::to_string(reference_per_call * 1e6) + " us (" + std::to_string(back_to_back_speedup) +
                                "x): a time the kernel's process reports does not make a speedup");
      return;
    case BackToBack::kCounted:
      // An honest kernel bound by its launches' host time (the subset's composed layer norm, 0.28x
      // paired, 0.17x back to back, H200), or a CPU's noisier runs, keeps what it costs.
      f.kernel_us = f.kernel_mean_us = per_call * 1e6;
      f.reference_us = reference_per_call * 1e6;
      count_scaled_speedup(measured, back_to_back_speedup / f.speedup, "back_to_back_time");
      return;
  }
}

Measurement measure_in_worker_once(const std::string& op_display, const c10::OperatorHandle& handle, const Backend& backend,
                                   c10::Device device, const std::vector<std::vector<c10::IValue>>& value_sets,
                                   const std::vector<InputDraw>& drawn_from, const Settings& settings,
                                   const std::string& where, const std::vector<c10::IValue>* checked_outputs,
                                   double& fastest_reference_us) {
  json header = call_request("time", op_display, backend.name(), handle, device);
  header["timing"] = timing_settings(settings);
  header["where"] = where;
  // Each batch's last kernel outputs come back to be judged here, within a budget of bytes; the
  // answer may carry no more than they can need.
  const uint64_t expected_bytes = checked_outputs != nullptr ? stack_bytes(*checked_outputs) : 0;
  const uint64_t output_budget = std::max(kTimedOutputBudgetBytes, 2 * expected_bytes);
  header["timing"]["timed_output_bytes"] = output_budget;
  // Value sets the worker can make itself do not cross (a worker timing other values than
  // these gains nothing it could not claim anyway: its figures are bounded below).
  const std::vector<char> payload = put_value_sets(header, value_sets, drawn_from);
  WorkerPoolRequests pool;
  const WorkerPoolRequests::Key key = WorkerPoolRequests::key_of(backend, device);
  std::vector<char> timed_outputs;
  json answer;
  double observed = 0, cpu_waited = -1;
  {
    // How long tasks waited for a core meanwhile.
    const processes::LoadMeter load({pool.worker_pid(key)});
    const auto started = std::chrono::steady_clock::now();
    answer = pool.request(key, header, payload, &timed_outputs, kAnswerSlackBytes + kAnswerMultiple * (output_budget + expected_bytes));
    observed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    cpu_waited = load.waited_share();
  }
  if (answer.contains("error") && answer["error"].is_string()) throw std::runtime_error(answer["error"].get<std::string>());
  Measurement measured;
  SupervisorValues values(op_display, handle, device, value_sets, drawn_from, checked_outputs);
  std::string wrong_when_timed;
  try {
    const json& m = answer.at("measurement");
    measured = counted_measurement(m, int64_t{settings.stopping.max_samples} + settings.layout.batch_pairs);
    measured.figures.cpu_waited = cpu_waited;
    if (measured.errors.empty()) {
      wrong_when_timed = judge_timed_outputs(m, timed_outputs, device.is_cuda() ? &pool.gpu_imports(key.second) : nullptr,
                                             values, settings.layout.batch_pairs);
    }
  } catch (const std::exception& error) {
    throw std::runtime_error(std::string("the kernel worker's timing answer is malformed: ") + error.what());
  }
  if (!wrong_when_timed.empty()) {
    measured.flags.push_back("wrong_when_timed");
    measured.errors.push_back(backend.name() + " (" + backend.source() + ") on " + where +
                              ": right when checked but wrong when timed: " + wrong_when_timed);
    return measured;
  }
  // The bound from outside: the samples ran one after another inside this request, so together
  // they took no longer than it did.
  const TimingFigures& f = measured.figures;
  double claimed = 0;
  for (size_t i = 0; i < measured.kernel_samples.size(); ++i) claimed += measured.reference_samples[i] + measured.kernel_samples[i];
  if (measured.errors.empty() && claimed > observed) {
    measured.flags.push_back("timing_disagrees");
    measured.errors.push_back(backend.name() + " (" + backend.source() + "): the timing its worker reported (" +
                              std::to_string(f.samples) + " samples, reference median " + std::to_string(f.reference_us) +
                              " us, kernel median " + std::to_string(f.kernel_us) + " us: at least " +
                              std::to_string(claimed) + " s) disagrees with the " + std::to_string(observed) +
                              " s the supervisor observed for the whole measurement");
  }
  // Last, both sides back to back by this process's clock.
  const auto left_busy = [&](const GpuLeftBusy& error) {
    measured.flags.push_back(error.other_programs ? "gpu_shared" : "timing_disagrees");
    measured.errors.push_back(backend.name() + " (" + backend.source() + ") on " + where + ": " + error.what());
  };
  const auto bound_below = [&] {
    if (!measured.errors.empty()) return;
    const auto bound_started = std::chrono::steady_clock::now();
    try {
      bound_by_back_to_back(measured, op_display, handle, backend, device, values, drawn_from, where, settings);
    } catch (const GpuLeftBusy& error) {
      left_busy(error);
    }
    measured.bound_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - bound_started).count();
  };
  // The reference as the worker timed it runs in the kernel's process, where a kernel can slow
  // it (a slower aten kernel registered at load, say) to inflate its own speedup. This process
  // times the reference itself (supervisor_reference); the worker's may not be more than
  // kReferenceAgreement times slower (plus kReferenceSlackUs of noise on tiny calls).
  const double agreement = device.is_cuda() ? kReferenceAgreement : kCpuReferenceAgreement;
  // On CUDA's bounded calls the figure counted is at most kCudaCountedReferenceAgreement times
  // this process's: timed here whatever the floor says.
  const bool counted_within_own = long_cuda_calls(device, f);
  if (measured.errors.empty() && checked_outputs != nullptr && !counted_within_own) {
    // A figure the work's own floor already bounds needs no timing here (1 to 2 ms a case on the
    // H200: 4 samples, 7 flushes and a synchronisation); the roofline counts the checks' outputs.
    const Work work = work_of(facts_of(op_display), value_sets.at(0), *checked_outputs);
    const double floor_us = honest_floor_seconds(work, device_peaks(device, work.dtype, settings)) * 1e6;
    if (!reference_figure_needs_timing(f.reference_us, agreement, floor_us)) {
      measured.reference_outputs = *checked_outputs;
      bound_below();
      return measured;
    }
  }
  if (measured.errors.empty()) {
    double own_us = 0;
    try {
      // The fastest this process has read the reference in any attempt: other work on the machine
      // only ever adds time, so more attempts sharpen the bound and never loosen it (a median
      // that one busy attempt inflated 10x let a reference slowed 40x through).
      const auto bound_started = std::chrono::steady_clock::now();
      SupervisorReference own = supervisor_reference(op_display, handle, device, value_sets.at(0), settings, f.kernel_us,
                                                       pool.worker_pid(key));
      measured.bound_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - bound_started).count();
      own_us = std::min(fastest_reference_us, own.us);
      fastest_reference_us = own_us;
      measured.supervisor_reference_us = own_us;
      measured.reference_outputs = std::move(own.outputs);
    } catch (const GpuLeftBusy& error) {
      left_busy(error);
      return measured;
    } catch (const std::exception& error) {
      measured.errors.push_back(backend.name() + " (" + backend.source() + "): the reference failed when timed on " + where +
                                ": " + error.what());
      return measured;
    }
    const double allowed = agreement * own_us + kReferenceSlackUs;
    if (f.reference_us > allowed) {
      measured.flags.push_back("timing_disagrees");
      measured.errors.push_back(backend.name() + " (" + backend.source() + "): its worker timed the reference at " +
                                std::to_string(f.reference_us) + " us, more than " + std::to_string(agreement) +
                                "x the " + std::to_string(own_us) +
                                " us the supervisor measured; a reference slowed in the kernel's process does not make a speedup");
    } else if (counted_within_own) {
      const double counted = counted_reference_us(f.reference_us, own_us, kCudaCountedReferenceAgreement);
      if (counted < f.reference_us) {
        count_scaled_speedup(measured, counted / f.reference_us, "supervisor_reference_time");
        measured.figures.reference_us = counted;
      }
    }
  }
  bound_below();
  return measured;
}

}  // namespace

uint64_t back_to_back_budget_bytes(bool cuda, uint64_t device_memory_bytes) {
  if (!cuda) return kBackToBackBytes;
  const auto share = static_cast<uint64_t>(kCudaBackToBackMemoryShare * static_cast<double>(device_memory_bytes));
  return std::clamp(share, kBackToBackBytes, kMostCudaBackToBackBytes);
}

int64_t back_to_back_calls(double claimed_seconds, uint64_t input_bytes, uint64_t output_bytes, uint64_t budget_bytes) {
  double calls = claimed_seconds > 0 ? std::ceil(kBackToBackSeconds / claimed_seconds) : static_cast<double>(kMostDistinctBackToBackCalls);
  calls = std::clamp(calls, static_cast<double>(kLeastBackToBackCalls), static_cast<double>(kMostDistinctBackToBackCalls));
  const auto budget = static_cast<double>(budget_bytes);
  if (input_bytes > 0) calls = std::min(calls, std::max(2.0, std::floor(budget / static_cast<double>(input_bytes))));
  if (output_bytes > 0) calls = std::min(calls, std::max(2.0, std::floor(budget / static_cast<double>(output_bytes))));
  return static_cast<int64_t>(calls);
}

double counted_run_seconds(double run_seconds, double digests_seconds, double own_digests_seconds) {
  if (digests_seconds <= kDigestAllowance * own_digests_seconds + kDigestSlackSeconds) return run_seconds;
  return run_seconds + digests_seconds - own_digests_seconds;
}

double run_floor_seconds(const Work& work, int64_t calls, const Peaks& peaks, double cache_bytes) {
  const auto n = static_cast<double>(calls);
  double floor = 0;
  if (peaks.flops_per_second > 0) floor = n * work.flops / peaks.flops_per_second / kRunFloorMargin;
  if (peaks.bytes_per_second > 0 && n * work.bytes >= std::max(kRunFloorLeastBytes, cache_bytes)) {
    floor = std::max(floor, n * work.bytes / peaks.bytes_per_second / (peaks.bound ? kRunFloorBoundBytesMargin : kRunFloorMargin));
  }
  return floor;
}

int64_t run_output_chunk(uint64_t call_output_bytes, size_t call_output_tensors) {
  const uint64_t by_bytes = call_output_bytes > 0 ? kRunOutputChunkBytes / call_output_bytes : kRunOutputChunkBytes;
  const uint64_t by_descriptors = (device_share::kMaxDescriptors - 10) / std::max<size_t>(1, call_output_tensors);
  return static_cast<int64_t>(std::max<uint64_t>(1, std::min(by_bytes, by_descriptors)));
}

double net_run_seconds(double run_seconds, double least_round_trip_seconds, double least_path_seconds) {
  return std::max(kLeastNetRunSeconds, run_seconds - std::clamp(least_round_trip_seconds, 0.0, kMostRoundTripSeconds) -
                                           std::clamp(least_path_seconds, 0.0, kMostRunInputsPathSeconds));
}

bool back_to_back_ends_within_claim(bool cuda, bool short_cuda_calls, bool reference_capped) {
  return cuda && !short_cuda_calls && !reference_capped;
}

double back_to_back_allowance(double claimed_seconds, int64_t calls, double round_trip_spread_seconds) {
  const double launch_slack = kLaunchSlackSeconds * std::max(0.0, 1.0 - claimed_seconds / kBoundedCallSeconds);
  return (1 + kBackToBackTolerance) * static_cast<double>(calls) * claimed_seconds + kRunSlackSeconds +
         std::clamp(kRoundTripSpreadAllowance * round_trip_spread_seconds, 0.0, kMostRoundTripSpreadSeconds) +
         static_cast<double>(calls) * launch_slack;
}

BackToBack judge_back_to_back(double paired_speedup, double back_to_back_speedup, double call_seconds, bool cuda) {
  const bool short_call = call_seconds < kBoundedCallSeconds;
  const double tolerance = cuda ? (short_call ? kCudaShortCallBackToBackTolerance : kBackToBackTolerance)
                                : (short_call ? kCpuShortCallBackToBackTolerance : kCpuBackToBackTolerance);
  if (paired_speedup <= (1 + tolerance) * back_to_back_speedup) return BackToBack::kAgrees;
  const double fail_ratio = cuda ? (short_call ? kCudaShortCallFailRatio : kBackToBackFailRatio) : kCpuBackToBackFailRatio;
  return paired_speedup > fail_ratio * back_to_back_speedup ? BackToBack::kDisagrees : BackToBack::kCounted;
}

double counted_reference_us(double worker_reference_us, double own_reference_us, double agreement) {
  return std::min(worker_reference_us, agreement * own_reference_us + kReferenceSlackUs);
}

bool reference_figure_needs_timing(double worker_reference_us, double agreement, double honest_floor_us) {
  return !(worker_reference_us <= agreement * honest_floor_us + kReferenceSlackUs) || worker_reference_us < honest_floor_us;
}

Measurement counted_measurement(const json& m, int64_t most_samples) {
  Measurement measured;
  TimingFigures& f = measured.figures;
  const auto figure = [&m](const char* key) {
    const double value = m.at(key).get<double>();
    if (!std::isfinite(value) || value < 0) throw std::runtime_error(std::string(key) + " is not a finite number of at least 0");
    return value;
  };
  // Flags that fail a case, or only add to the kernel's time, are believed (a worker can only
  // lose by them); the others describe a speedup, and this process decides those itself
  // (here speedup_review; time_case suspect and overhead_dominated).
  for (const std::string& flag : m.at("flags").get<std::vector<std::string>>()) {
    if (flag == "wrong_when_timed" || flag == "hidden_work" || flag == "host_time_added") measured.flags.push_back(flag);
  }
  measured.errors = m.at("errors").get<std::vector<std::string>>();
  measured.reference_samples = m.at("reference_samples").get<std::vector<double>>();
  measured.kernel_samples = m.at("kernel_samples").get<std::vector<double>>();
  const size_t pairs = measured.kernel_samples.size();
  if (pairs == 0 && !measured.errors.empty()) return measured;  // it failed while timed: nothing to count
  if (pairs == 0 || measured.reference_samples.size() != pairs) throw std::runtime_error("no pairs of samples, or unpaired ones");
  if (static_cast<int64_t>(pairs) > most_samples) {
    throw std::runtime_error(std::to_string(pairs) + " pairs of samples, more than the " + std::to_string(most_samples) + " asked for");
  }
  PairedSamples pair;
  for (size_t i = 0; i < pairs; ++i) {
    const double reference = measured.reference_samples[i], kernel = measured.kernel_samples[i];
    if (!std::isfinite(reference) || !std::isfinite(kernel) || reference <= 0 || kernel <= 0) {
      throw std::runtime_error("a sample that is not a positive number of seconds");
    }
    pair.reference.add(reference);
    pair.kernel.add(kernel);
    pair.ratios.push_back(reference / kernel);
  }
  // Every figure counted, computed here as measure_case computes its own; the worker's are not read.
  set_pair_figures(f, pair);
  f.launch_overhead_us = figure("launch_overhead_us");
  f.hidden_work_us = figure("hidden_work_us");
  if (std::find(measured.flags.begin(), measured.flags.end(), "host_time_added") != measured.flags.end()) {
    // Host time the events missed, added to the kernel's as measure_case adds it.
    const double timed_us = f.kernel_us;
    f.kernel_us += f.hidden_work_us;
    f.kernel_mean_us += f.hidden_work_us;
    scale_speedup(f, timed_us / f.kernel_us);
  }
  if (f.speedup > kSpeedupReviewThreshold) measured.flags.push_back("speedup_review");
  return measured;
}

Measurement measure_in_worker(const std::string& op_display, const c10::OperatorHandle& handle, const Backend& backend,
                              c10::Device device, const std::vector<std::vector<c10::IValue>>& value_sets,
                              const std::vector<InputDraw>& drawn_from, const Settings& settings,
                              const std::string& where, const std::vector<c10::IValue>* checked_outputs) {
  // Measured up to kTimingAttempts times, 1, 2 then 4 s apart, before it fails: on a busy
  // machine (other processes on the cores, the kernel writing back a build) a measurement of an
  // honest kernel can disagree with the supervisor's for a while. The figures kept are always
  // those of a measurement that agreed, with the fastest reference this process read in any
  // attempt: another chance gives a cheat nothing but time.
  constexpr int kTimingAttempts = 4;
  constexpr int kUncertainRetries = 1;
  // A GPU another program held (gpu_shared) is measured again too: its work may end meanwhile.
  const auto disagrees = [](const Measurement& m) {
    return std::find(m.flags.begin(), m.flags.end(), "timing_disagrees") != m.flags.end() ||
           std::find(m.flags.begin(), m.flags.end(), "gpu_shared") != m.flags.end();
  };
  double fastest_reference_us = std::numeric_limits<double>::infinity();
  // Every other worker of this process stopped while this kernel is timed, in every attempt
  // (processes.h): no kernel's load-time threads take a core from another's timing.
  WorkerPoolRequests pool;
  const WorkerPoolRequests::Key key = WorkerPoolRequests::key_of(backend, device);
  const processes::Stopped others(pool.worker_pids_but(key));
  // Other processes' load over the whole attempt (the worker's request, and this process's own
  // reference and back-to-back timing), long enough for /proc/stat's clock ticks more often.
  const auto measure_once = [&] {
    const processes::LoadMeter load({pool.worker_pid(key)});
    Measurement m = measure_in_worker_once(op_display, handle, backend, device, value_sets, drawn_from, settings, where,
                                           checked_outputs, fastest_reference_us);
    m.figures.other_load = load.other_cores();
    return m;
  };
  Measurement measured = measure_once();
  double bound_ms = measured.bound_ms;
  for (int attempt = 1; attempt < kTimingAttempts && disagrees(measured); ++attempt) {
    std::cerr << "backendbench: measuring " << where << " on " << backend.name() << " again (attempt " << attempt + 1 << " of "
              << kTimingAttempts << "): " << measured.errors.back() << "\n";
    std::this_thread::sleep_for(std::chrono::seconds(1 << (attempt - 1)));
    measured = measure_once();
    bound_ms += measured.bound_ms;
  }
  // A disagreement that held while other processes took the cores (measured from outside: the
  // kernel's own threads count as its own) says nothing of the kernel: under another test's load
  // an honest relu's worker read the reference 5.4x the supervisor's in every attempt. It is not
  // counted as a failure but as no gain, flagged (a kernel cannot make other processes' load).
  if (!device.is_cuda() && disagrees(measured) && measured.figures.other_load > kMostOtherLoadCores) {
    std::cerr << "backendbench: " << where << " on " << backend.name() << ": its timing disagreed while other processes took "
              << measured.figures.other_load << " cores; not counted as a gain: " << measured.errors.back() << "\n";
    measured.errors.clear();
    measured.flags.erase(std::remove(measured.flags.begin(), measured.flags.end(), "timing_disagrees"), measured.flags.end());
    measured.flags.push_back("speedup_uncertain");
    if (measured.figures.speedup > 1) scale_speedup(measured.figures, 1 / measured.figures.speedup);
    measured.bound_ms = bound_ms;
    return measured;
  }
  // On a CPU, a speedup too unsure to count (timing.h, why_uncertain: other processes took the
  // cores, or its interval is too wide) is measured once more, then flagged: it counts no gain.
  // A kernel that makes its own figures noisy only loses by it.
  const auto uncertain = [&](const Measurement& m) {
    return device.is_cuda() || !m.errors.empty() ? std::string() : why_uncertain(m.figures);
  };
  for (int retry = 0; retry < kUncertainRetries && !uncertain(measured).empty(); ++retry) {
    std::cerr << "backendbench: measuring " << where << " on " << backend.name() << " again: " << uncertain(measured) << "\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Measurement again = measure_once();
    bound_ms += again.bound_ms;
    // A retry that disagrees leaves the measurement that agreed, still unsure (a busy machine
    // is what made both; what it could give a cheat, the cap takes).
    if (disagrees(again)) break;
    measured = std::move(again);
  }
  if (const std::string why = uncertain(measured); !why.empty()) {
    measured.flags.push_back("speedup_uncertain");
    std::cerr << "backendbench: " << where << " on " << backend.name() << ": speedup " << measured.figures.speedup
              << "x not counted as a gain: " << why << "\n";
  }
  measured.bound_ms = bound_ms;
  return measured;
}

// The manifest lines whose workers `jobs` need.

}  // namespace backendbench
