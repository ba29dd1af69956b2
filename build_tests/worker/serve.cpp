// The kernel worker's loop: the only code that runs beside kernel code; see serve.h.
#include "worker/serve.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/from_blob.h>
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
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "backendbench/backend.h"
#include "language/json_text.h"
#include "protocol/device_share.h"
#include "backendbench/inputs.h"
#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"
#include "backendbench/tensor_values.h"
#include "backendbench/kernel_imports.h"
#include "backendbench/measure.h"
#include "backendbench/timing.h"
#include "protocol/worker_protocol.h"

namespace backendbench {
namespace {

using nlohmann::json;
using worker::response_header;
using worker::start_cuda_on;

// ---------------------------------------------------------------------------------------------
// Worker side.

std::string device_rule(const Backend& backend) {
  Settings on_cpu, on_cuda;
  on_cpu.device = c10::Device(c10::DeviceType::CPU);
  on_cuda.device = c10::Device(c10::DeviceType::CUDA, 0);
  const c10::Device a = backend.device(on_cpu), b = backend.device(on_cuda);
  if (a != b) return "reference";
  return a.is_cuda() ? "cuda" : "cpu";
}

const Backend& named_backend(const json& header) {
  const Backend* backend = backends().find(header.value("operator", ""), header.value("backend", ""));
  if (backend == nullptr || backend->kind() != Backend::Kind::kKernel) {
    throw std::runtime_error("no kernel " + header.value("backend", "") + " of " + header.value("operator", "") + " here");
  }
  return *backend;
}

// Loaded tensors share storages that cannot grow (an out= argument a kernel resizes must): each
// storage is copied once into one that can, and every tensor on it moved over, aliases kept.
void make_storages_resizable(std::vector<c10::IValue>& values) {
  std::map<const void*, at::Tensor> copies;
  at::NoGradGuard no_grad;
  for (at::Tensor tensor : tensors_in(values)) {
    if (!tensor.defined() || tensor.layout() != at::kStrided || tensor.storage().resizable()) continue;
    const c10::Storage& storage = tensor.storage();
    at::Tensor& copy = copies[storage.unsafeGetStorageImpl()];
    if (!copy.defined()) copy = storage_bytes(storage).clone();
    tensor.set_(copy.storage(), tensor.storage_offset(), tensor.sizes(), tensor.strides());
  }
}

// What a call or time request names: the backend, the operator's handle, the device.
struct CallTarget {
  const Backend& backend;
  c10::OperatorHandle op;
  c10::Device device;
};

// A Python kernel's module is imported here, before any observed or timed call (once per
// process: the GPU worker has not been asked `unusable`).
CallTarget call_target(const json& header) {
  const Backend& backend = named_backend(header);
  if (const std::optional<Backend::Unusable> unusable = backend.unusable()) throw std::runtime_error(unusable->reason);
  return {backend,
          c10::Dispatcher::singleton().findSchemaOrThrow(header.value("schema_name", "").c_str(),
                                                         header.value("overload", "").c_str()),
          c10::Device(header.value("device", "cpu"))};
}

// One stack of inputs, made here from how the supervisor made its own (draw_json).
std::vector<c10::IValue> drawn_inputs(const json& drawn, const c10::OperatorHandle& op, c10::Device device) {
  const std::string arguments = drawn.at("arguments").get<std::string>(), file = drawn.at("file").get<std::string>();
  const CaseSpec spec{"", arguments.c_str(), file.c_str(), drawn.at("line").get<int>(), drawn.at("seed").get<uint64_t>(), 0, ""};
  return materialize(op.schema(), spec, device, drawn.at("draw").get<int>(), drawn.at("salt").get<uint64_t>());
}

// The case a recipe (draw_json) draws from, for KeptDraws: everything but the draw.
std::string drawn_case_key(json drawn, const c10::OperatorHandle& op, c10::Device device) {
  drawn.erase("draw");
  drawn.erase("timed_next");
  return json_text::dump(drawn) + " " + op.schema().name() + "." + op.schema().overload_name() + " " + device.str();
}

worker::KeptDraws& kept_draws() {
  static auto* kept = new worker::KeptDraws;  // never destroyed: CUDA unloads before statics
  return *kept;
}

json answer_call(const json& header, const std::vector<char>& payload, std::vector<char>& out,
                 device_share::Exports* exports, bool& fatal) {
  json answer = response_header();
  const auto [backend, op, device] = call_target(header);
  std::vector<c10::IValue> inputs;
  std::vector<at::Tensor> kept;  // a draw timed next: its untouched copy's tensors
  if (header.contains("inputs")) {
    const json& drawn = header.at("inputs");
    inputs = drawn_inputs(drawn, op, device);
    if (drawn.value("timed_next", false)) {
      kept = tensors_in(kept_draws().keep(drawn_case_key(drawn, op, device), drawn.at("draw").get<int>(), inputs));
    }
  } else {
    inputs = worker::load_values(payload);
    make_storages_resizable(inputs);
  }
  // The inputs' bytes before the call: an input the call left as it was does not go back (the
  // supervisor's copy is the same), which halves what crosses for most operators. That the
  // worker says so is no more its word than the bytes it would send: it could send either. A
  // draw kept for timing is such a copy already, read in place.
  std::vector<at::Tensor> before;
  const std::vector<at::Tensor> given = tensors_in(inputs);
  for (size_t i = 0; i < given.size(); ++i) {
    const at::Tensor& tensor = given[i];
    const bool kept_alike = i < kept.size() && tensor.defined() && kept[i].defined() && tensor.layout() == at::kStrided &&
                            kept[i].layout() == at::kStrided && kept[i].storage().nbytes() == tensor.storage().nbytes();
    before.push_back(!tensor.defined() ? at::Tensor()
                     : kept_alike      ? storage_bytes(kept[i].storage())
                                       : storage_bytes(tensor.storage()).clone());
  }
  Backend::ObservedCall observed;
  try {
    observed = backend.call_observed(op, inputs, device);
  } catch (const std::exception& error) {
    answer["error"] = error.what();
    // A CUDA error is sticky: this process cannot run another call. Answer, then end.
    fatal = device.is_cuda() && std::string(error.what()).find("CUDA") != std::string::npos;
    return answer;
  }
  const std::vector<at::Tensor> tensors = tensors_in(inputs);
  json same = json::array();
  for (const c10::IValue& output : observed.outputs) {
    int64_t index = -1;
    if (output.isTensor()) {
      for (size_t i = 0; i < tensors.size() && index < 0; ++i) {
        if (tensors[i].defined() && output.toTensor().is_same(tensors[i])) index = static_cast<int64_t>(i);
      }
    }
    same.push_back(index);
  }
  answer["output_is_input"] = same;
  answer["inside"] = {{"dispatched", observed.inside.dispatched},
                      {"dispatched_elsewhere", observed.inside.dispatched_elsewhere},
                      {"state_changes", observed.inside.state_changes},
                      {"threads_left", observed.inside.threads_left},
                      {"late_device_writes", observed.inside.late_device_writes},
                      {"aten_computing", observed.inside.aten_computing},
                      {"aten_share", observed.inside.aten_share}};
  std::vector<c10::IValue> changed;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const bool same = before[i].defined() && tensors[i].defined() &&
                      tensors[i].storage().nbytes() == static_cast<size_t>(before[i].numel()) &&
                      at::equal(storage_bytes(tensors[i].storage()), before[i]);
    changed.emplace_back(same ? at::Tensor() : tensors[i]);
  }
  out = worker::save_values({c10::ivalue::Tuple::create(changed), c10::ivalue::Tuple::create(observed.outputs)}, exports);
  return answer;
}

json figures_json(const Measurement& measured) {
  const TimingFigures& f = measured.figures;
  return {{"reference_us", f.reference_us},
          {"kernel_us", f.kernel_us},          {"kernel_mean_us", f.kernel_mean_us},
          {"speedup", f.speedup},              {"samples", f.samples},
          {"iqr_pct", f.iqr_pct},              {"reference_iqr_pct", f.reference_iqr_pct},
          {"launch_overhead_us", f.launch_overhead_us}, {"hidden_work_us", f.hidden_work_us},
          {"flags", measured.flags},           {"errors", measured.errors},
          {"reference_samples", measured.reference_samples}, {"kernel_samples", measured.kernel_samples}};
}

// The value sets a request names (put_value_sets): made here from their recipes (`take_kept`:
// the draws kept for timing are taken instead where there are some), or read from its payload.
std::vector<std::vector<c10::IValue>> value_sets_of(const json& header, const std::vector<char>& payload,
                                                    const c10::OperatorHandle& op, c10::Device device, bool take_kept) {
  std::vector<std::vector<c10::IValue>> value_sets;
  if (header.contains("value_sets")) {
    for (const json& drawn : header.at("value_sets")) {
      std::optional<std::vector<c10::IValue>> kept;
      if (take_kept) kept = kept_draws().take(drawn_case_key(drawn, op, device), drawn.at("draw").get<int>());
      value_sets.push_back(kept ? std::move(*kept) : drawn_inputs(drawn, op, device));
    }
    if (take_kept) kept_draws().clear();
    return value_sets;
  }
  for (const c10::IValue& set : worker::load_values(payload)) {
    if (!set.isTuple()) throw std::runtime_error("a value set that is not a tuple");
    value_sets.emplace_back(set.toTupleRef().elements().begin(), set.toTupleRef().elements().end());
    make_storages_resizable(value_sets.back());
  }
  return value_sets;
}

json answer_time(const json& header, const std::vector<char>& payload, std::vector<char>& out,
                 device_share::Exports* exports, bool& fatal) {
  json answer = response_header();
  const auto [backend, op, device] = call_target(header);
  std::vector<std::vector<c10::IValue>> value_sets = value_sets_of(header, payload, op, device, /*take_kept=*/true);
  const json t = header.value("timing", json::object());
  StoppingRule rule;
  rule.min_samples = t.value("min_samples", rule.min_samples);
  rule.max_samples = t.value("max_samples", rule.max_samples);
  rule.target_relative_error = t.value("target_relative_error", rule.target_relative_error);
  rule.seconds_cap = t.value("seconds_cap", rule.seconds_cap);
  SamplingLayout layout;
  layout.flush = t.value("flush", "read") == "write" ? SamplingLayout::Flush::kWrite : SamplingLayout::Flush::kRead;
  layout.flush_bytes = t.value("flush_bytes", layout.flush_bytes);
  layout.batch_pairs = t.value("batch_pairs", layout.batch_pairs);
  // One timer per device, never destroyed (see bench_main.cpp: CUDA unloads before statics).
  static auto* timers = new std::map<std::string, std::unique_ptr<Timer>>;
  std::unique_ptr<Timer>& timer = (*timers)[device.str()];
  if (!timer) timer = std::make_unique<Timer>(device, rule, layout);
  // Nothing is judged here: each batch's last kernel outputs go back to the supervisor.
  const uint64_t keep_bytes = t.value("timed_output_bytes", uint64_t{0});
  Measurement measured = measure_case(header.value("operator", ""), op, backend, device, value_sets, *timer,
                                      header.value("where", std::string("the case")), keep_bytes);
  for (const std::string& error : measured.errors) {
    fatal = fatal || (device.is_cuda() && error.find("CUDA") != std::string::npos);
  }
  answer["measurement"] = figures_json(measured);
  json batches = json::array();
  std::vector<c10::IValue> outputs;
  for (TimedOutput& timed : measured.timed_outputs) {
    batches.push_back({timed.batch, timed.value_set});
    outputs.push_back(c10::ivalue::Tuple::create(std::move(timed.outputs)));
  }
  answer["measurement"]["timed_outputs"] = batches;
  if (!outputs.empty()) out = worker::save_values(outputs, exports);
  return answer;
}

// The calls a `prepare_run` made ready for the `run` that follows: one stack of inputs each, over
// the memory the supervisor writes their values in (or, on CUDA without shared memory, each a draw
// of its own: its recipe's draw plus the call's index, made before the supervisor's clock starts).
struct PreparedRun {
  BoundCall call;
  c10::Device device;
  std::vector<std::vector<c10::IValue>> inputs;
  std::shared_ptr<const void> memory;  // the memory file its inputs are over
};

// The memory file of the last run, kept until its outputs are all handed over (or the next
// `prepare_run`): unmapped with its inputs' last tensor, in the run's last call, it cost that call
// 14 ms of the supervisor's clock (256 MiB); kept longer, every CUDA worker that had run held its
// last run's inputs on the device (a 16th of its memory each: 14 kernels' workers ran an H100 out
// of memory).
std::shared_ptr<const void>& last_run_memory() {
  static auto* memory = new std::shared_ptr<const void>;
  return *memory;
}

std::optional<PreparedRun>& prepared_run() {
  static auto* prepared = new std::optional<PreparedRun>;  // never destroyed: CUDA unloads before statics
  return *prepared;
}

// The last run's outputs, every call's, until `run_output` has handed them all over.
std::vector<std::vector<c10::IValue>>& run_outputs() {
  static auto* outputs = new std::vector<std::vector<c10::IValue>>;
  return *outputs;
}

// The calls' inputs of a run: the request's head of their values over the memory file whose
// descriptor came before it (memory_file.h; on CUDA device_share.h: DeviceMemoryFile), still
// empty. The supervisor writes their values while this worker's processes are stopped, and lets
// them go on once its clock runs.
std::vector<std::vector<c10::IValue>> inputs_over_memory_file(const json& header, const std::vector<char>& head,
                                                              device_share::Descriptors descriptor, int64_t calls,
                                                              c10::Device device, std::shared_ptr<const void>& memory) {
  const json bytes = header.value("memory_file_bytes", json());
  if (!bytes.is_number_unsigned() || bytes.get<uint64_t>() > worker::kMaxPayloadBytes) {
    throw std::runtime_error("a 'prepare_run' whose 'memory_file_bytes' is not a byte count");
  }
  worker::MemoryOver over;
  if (device.is_cuda()) {
    over = worker::memory_over(device_share::DeviceMemoryFile::adopt(descriptor.get().at(0), bytes.get<uint64_t>(), device));
  } else {
    over = worker::memory_over(worker::MemoryFile::adopt(descriptor.get().at(0), bytes.get<uint64_t>()));
  }
  memory = over.owner;
  std::vector<std::vector<c10::IValue>> inputs;
  for (const c10::IValue& call : worker::load_values_over(head, over)) {
    if (!call.isTuple()) throw std::runtime_error("a 'prepare_run' whose inputs are not a tuple a call");
    const auto& elements = call.toTupleRef().elements();
    inputs.emplace_back(elements.begin(), elements.end());
  }
  if (static_cast<int64_t>(inputs.size()) != calls) throw std::runtime_error("a 'prepare_run' with another count of inputs than calls");
  return inputs;
}

// A run's calls made ready: their inputs over the memory file the supervisor fills later; on CUDA
// where memory cannot be shared, each a draw of its own (the recipe's draw plus the call's
// index), made here.
json answer_prepare_run(const json& header, const std::vector<char>& payload, int socket) {
  // The memory file's descriptor came before the request: taken first, whatever else is wrong,
  // so that the next request does not find it.
  const bool over_file = header.contains("memory_file_bytes");
  if (over_file && socket < 0) throw std::runtime_error("a 'prepare_run' with a memory file to a worker without a socket");
  device_share::Descriptors descriptor;
  if (over_file) descriptor = device_share::Descriptors(device_share::receive_descriptors(socket, 1, /*timeout_ms=*/5000));
  const auto [backend, op, device] = call_target(header);
  const json calls = header.value("calls", json());
  const json recipes = header.value("value_sets", json());
  const json output_bytes = header.value("output_bytes", json::array());
  if (!calls.is_number_unsigned() || calls.get<int64_t>() < 1 || calls.get<int64_t>() > worker::kMostBackToBackCalls ||
      (!over_file && (device.is_cpu() || !recipes.is_array() || recipes.size() != 1))) {
    throw std::runtime_error("a 'prepare_run' without a count of calls from 1 to " + std::to_string(worker::kMostBackToBackCalls) +
                             ", or without its inputs: a memory file, or on CUDA the first call's recipe");
  }
  std::vector<uint64_t> blocks;
  uint64_t total = 0;
  for (const json& bytes : output_bytes) {
    if (!bytes.is_number_unsigned() || bytes.get<uint64_t>() > worker::kMaxPayloadBytes) {
      throw std::runtime_error("a 'prepare_run' whose 'output_bytes' is not a list of byte counts");
    }
    blocks.push_back(bytes.get<uint64_t>());
    total += blocks.back();
  }
  if (blocks.size() > 256 || total > worker::kMaxPayloadBytes / calls.get<uint64_t>()) {
    throw std::runtime_error("a 'prepare_run' whose outputs would hold more than " + std::to_string(worker::kMaxPayloadBytes) +
                             " bytes, or of over 256 blocks a call");
  }
  prepared_run().reset();
  run_outputs().clear();
  last_run_memory().reset();
  std::vector<std::vector<c10::IValue>> inputs;
  std::shared_ptr<const void> memory;
  if (over_file) {
    inputs = inputs_over_memory_file(header, payload, std::move(descriptor), calls.get<int64_t>(), device, memory);
  } else {
    json drawn = recipes.at(0);
    const int first = drawn.at("draw").get<int>();
    for (int64_t i = 0; i < calls.get<int64_t>(); ++i) {
      drawn["draw"] = first + static_cast<int>(i);
      inputs.push_back(drawn_inputs(drawn, op, device));
    }
  }
  PreparedRun prepared{backend.bind(op, inputs.at(0), device), device, std::move(inputs), std::move(memory)};
  ready_output_blocks(device, blocks, calls.get<int64_t>());  // as the supervisor's reference run (timing.h)
  synchronize_all_devices();  // the inputs are made before the clock starts
  prepared_run() = std::move(prepared);
  return response_header();
}

// A GPU worker's answer to `run_inputs_probe`, before it loads kernel code: with
// `memory_file_bytes` (its descriptor before the request), the device memory the supervisor
// shares, adopted and kept; without, one kernel of this process's over that memory (which the
// supervisor wrote while it held this process), and the device synchronised. The supervisor's
// clock over the latter is the shared path's cost that no run can avoid (worker_pool.h:
// run_inputs_path): the unlock, the continue, the GPU's switch to this process's context.
void answer_run_inputs_probe(const json& header, int socket) {
  static auto* probed = new std::shared_ptr<device_share::DeviceMemoryFile>;
  const c10::Device device(c10::DeviceType::CUDA, 0);
  if (header.contains("memory_file_bytes")) {
    device_share::Descriptors descriptor(device_share::receive_descriptors(socket, 1, /*timeout_ms=*/5000));
    const json bytes = header.at("memory_file_bytes");
    if (!bytes.is_number_unsigned() || bytes.get<uint64_t>() < 1 || bytes.get<uint64_t>() > (uint64_t{64} << 20)) {
      throw std::runtime_error("a 'run_inputs_probe' whose 'memory_file_bytes' is not a byte count of at most 64 MiB");
    }
    *probed = device_share::DeviceMemoryFile::adopt(descriptor.get().at(0), bytes.get<uint64_t>(), device);
    return;
  }
  if (!*probed) throw std::runtime_error("a 'run_inputs_probe' before the memory it probes");
  at::Tensor memory = at::from_blob((*probed)->data(), {static_cast<int64_t>((*probed)->bytes())},
                                    at::TensorOptions().dtype(at::kByte).device(device));
  memory.bitwise_not_();
  synchronize_all_devices();
}

// The prepared calls back to back, every call's outputs kept, then every device synchronised: the
// supervisor's clock runs from the request to this answer. The digests of the outputs
// (`run_digests`) follow at once, and the supervisor times them too.
json answer_run(bool& fatal) {
  if (!prepared_run()) throw std::runtime_error("a 'run' without a 'prepare_run' before it");
  PreparedRun prepared = std::move(*prepared_run());
  prepared_run().reset();
  last_run_memory() = prepared.memory;
  json answer = response_header();
  std::vector<std::vector<c10::IValue>> outputs;
  outputs.reserve(prepared.inputs.size());
  try {
    for (std::vector<c10::IValue>& inputs : prepared.inputs) outputs.push_back(prepared.call(std::move(inputs)));
    synchronize_all_devices();
  } catch (const std::exception& error) {
    answer["error"] = error.what();
    fatal = prepared.device.is_cuda() && std::string(error.what()).find("CUDA") != std::string::npos;
    return answer;
  }
  answer["value_set"] = prepared.inputs.size() - 1;  // the last call's draw, counted from the first's
  run_outputs() = std::move(outputs);
  return answer;
}

// One list of digests a call of the last run, under the request's key: what the outputs
// `run_output` sends next must have, so that their values were there when the supervisor's clock
// stopped (and the key, drawn by the supervisor for this request, was not known before).
json answer_run_digests(const json& header) {
  const json key = header.value("key", json());
  if (!key.is_number_unsigned()) throw std::runtime_error("a 'run_digests' without its key");
  json answer = response_header();
  json digests = json::array();
  for (const std::vector<c10::IValue>& outputs : run_outputs()) digests.push_back(worker::output_digests(outputs, key.get<uint64_t>()));
  answer["digests"] = std::move(digests);
  return answer;
}

// The last run's outputs of calls [first, first + count), a tuple each; the run's outputs are
// dropped once its last call's are sent.
json answer_run_output(const json& header, std::vector<char>& out, device_share::Exports* exports) {
  const json first = header.value("first", json()), count = header.value("count", json());
  std::vector<std::vector<c10::IValue>>& kept = run_outputs();
  if (!first.is_number_unsigned() || !count.is_number_unsigned() || count.get<size_t>() < 1 ||
      first.get<size_t>() >= kept.size() || count.get<size_t>() > kept.size() - first.get<size_t>()) {
    throw std::runtime_error("a 'run_output' without 'first' and 'count' within the last run's " + std::to_string(kept.size()) +
                             " calls");
  }
  std::vector<c10::IValue> tuples;
  for (size_t i = first.get<size_t>(); i < first.get<size_t>() + count.get<size_t>(); ++i) {
    tuples.push_back(c10::ivalue::Tuple::create(std::move(kept[i])));
  }
  out = worker::save_values(tuples, exports);
  if (first.get<size_t>() + count.get<size_t>() == kept.size()) kept.clear();
  return response_header();
}

json answer_list() {
  json answer = response_header();
  json kernels = json::array();
  for (const std::string& op : backends().operators()) {
    for (const Backend* backend : backends().for_operator(op, /*with_calibration=*/false)) {
      if (backend->kind() != Backend::Kind::kKernel) continue;
      kernels.push_back({{"operator", op},
                         {"backend", backend->name()},
                         {"source", backend->source()},
                         {"device", device_rule(*backend)},
                         {"derived", backend->is_derived()},
                         {"launches_from_python", backend->launches_from_python()}});
    }
  }
  answer["kernels"] = kernels;
  return answer;
}


}  // namespace

namespace {

// The threads libtorch starts on first use of large work (the intra-op pool, OpenMP's) are
// started before any kernel runs: they are not threads a kernel left behind.
void start_libtorch_threads() {
  at::Tensor warm = at::rand({int64_t{1} << 22});
  warm = at::maximum(warm.relu(), at::zeros({}, warm.options())) + warm;
  (void)warm.sum().item<float>();
}

}  // namespace

int serve_kernel_worker(int in_fd, int out_fd, std::optional<ManifestLine> to_load, const WorkerStart& start) {
  const int socket = start.socket;
  const bool gpu = start.gpu && socket >= 0;
  bool awaiting_manifest = start.awaiting_manifest;
  std::string load_error;  // why the manifest did not load: the answer to every request after
  // Until its first request of another kind the worker answers `round_trip`: no kernel code is in
  // the process yet, so the supervisor's clock over those answers measures the pipe alone.
  bool before_kernel_code = true;
  // A GPU worker's shared slots (device_share.h), kept for the process's life.
  static auto* exports = gpu ? new device_share::Exports : nullptr;
  // libtorch's threads, and a GPU worker's CUDA, start once before any kernel runs: right after
  // the listing (what the supervisor waits for at start-up) or, in a worker started again after
  // a crash, which is not asked to list, before its first request.
  bool ready = false;
  const auto get_ready = [&] {
    if (ready) return;
    ready = true;
    start_libtorch_threads();
    if (gpu) start_cuda_on(c10::Device(c10::DeviceType::CUDA, 0));
  };
  // A spare worker (started before its job) starts libtorch and CUDA while it waits: no kernel
  // code is loaded yet, so nothing of a kernel's can run among them.
  if (awaiting_manifest) get_ready();
  if (awaiting_manifest && start.start_python) {
    try {
      start_python_kernels();
    } catch (const std::exception&) {
      // Left for the kernels' own load, which says why in their verdicts.
    }
  }
  // New slots and retired ones are announced with an answer that is not an error (an error
  // answer hands nothing over; they are announced with the next).
  const auto send_answer = [&](json answer, std::vector<char>& payload) {
    if (exports != nullptr && !answer.contains("error")) {
      try {
        const device_share::Exports::Changes changes = exports->finish();
        if (!changes.empty()) {
          device_share::send_descriptors(socket, changes.descriptors);
          answer["shared_descriptors"] = changes.descriptors.size();
          json new_slots = json::array();
          for (size_t i = 0; i < changes.new_slots.size(); ++i) new_slots.push_back({changes.new_slots[i], changes.new_sizes[i]});
          answer["new_slots"] = new_slots;
          answer["retired_slots"] = changes.retired;
          exports->sent(changes);
        }
      } catch (const std::exception& error) {
        answer = response_header();
        answer["error"] = std::string("the kernel worker could not hand over its outputs: ") + error.what();
        payload.clear();
      }
    }
    worker::write_message(out_fd, {json_text::dump_replacing_invalid_utf8(answer), payload});
    return !answer.contains("error");
  };
  worker::MessageReader requests(in_fd);
  for (;;) {
    std::optional<worker::Message> request;
    try {
      request = requests.read(-1);
    } catch (const std::exception& error) {
      std::cerr << "backendbench-worker: " << error.what() << "\n";
      return 2;
    }
    if (!request) return 0;
    // The supervisor asks again only once it has copied the last answer out: every slot is free.
    if (exports != nullptr) exports->reuse();
    const json header = json_text::parse_or_discarded(request->header);
    json answer = response_header();
    std::vector<char> payload;
    bool fatal = false;
    bool listed = false;
    std::string kind;
    try {
      if (!header.is_object() || header.value("schema", "") != worker::kRequestSchema ||
          header.value("version", 0) != worker::kProtocolVersion) {
        throw std::runtime_error("not a version " + std::to_string(worker::kProtocolVersion) + " worker request");
      }
      kind = header.value("kind", "");
      if (kind == "round_trip") {
        if (!before_kernel_code) throw std::runtime_error("'round_trip' is answered only before the worker loads kernel code");
        send_answer(answer, payload);
        continue;
      }
      if (kind == "run_inputs_probe") {
        // Answered only before kernel code, as round_trip: what the supervisor times over it is
        // the shared path's own cost, free of any kernel's doing.
        if (!before_kernel_code || !gpu) {
          throw std::runtime_error("'run_inputs_probe' is answered only by a GPU worker before it loads kernel code");
        }
        get_ready();
        answer_run_inputs_probe(header, socket);
        send_answer(answer, payload);
        continue;
      }
      if (before_kernel_code && to_load) {
        try {
          load_kernel_manifest(to_load->path, to_load->line);
        } catch (const std::exception& error) {
          load_error = error.what();
        }
      }
      before_kernel_code = false;
      if (awaiting_manifest != (kind == "load")) {
        throw std::runtime_error(awaiting_manifest ? "a spare worker's first request must be 'load'"
                                                   : "'load' is a spare worker's first request only");
      }
      if (kind != "list") get_ready();
      if (kind == "load") {
        // Its answer is the protocol's only: a manifest that does not load is the answer to every
        // later request, as for a worker given it at start.
        awaiting_manifest = false;
        try {
          const json line = header.value("line", json(-1));
          if (!line.is_number_unsigned()) throw std::runtime_error("a 'load' without the manifest line to load");
          load_kernel_manifest(header.value("manifest", ""), line.get<int>());
        } catch (const std::exception& error) {
          load_error = error.what();
        }
      } else if (!load_error.empty()) {
        answer["error"] = load_error;
      } else if (kind == "list") {
        answer = answer_list();
        listed = true;
      } else if (kind == "unusable") {
        const std::optional<Backend::Unusable> unusable = named_backend(header).unusable();
        answer["unusable"] = unusable.has_value();
        if (unusable) answer["skip"] = unusable->skip, answer["reason"] = unusable->reason;
      } else if (kind == "call" && header.contains("draws")) {
        // A case's draws, one answer each, in order, until one that is an error; the last goes
        // out below, as every request's answer does.
        const json& draws = header.at("draws");
        if (!draws.is_array() || draws.empty()) throw std::runtime_error("'draws' is not a list of draws");
        json one = header;  // the call of one draw: this request less its list of draws
        one.erase("draws");
        for (size_t i = 0; i < draws.size(); ++i) {
          one["inputs"] = draws[i];
          answer = answer_call(one, request->payload, payload, exports, fatal);
          if (i + 1 == draws.size() || answer.contains("error")) break;
          if (!send_answer(answer, payload)) {
            answer = json();  // that one said why, and ends the request's answers
            break;
          }
          answer = response_header();
          payload.clear();
        }
      } else if (kind == "call") {
        answer = answer_call(header, request->payload, payload, exports, fatal);
      } else if (kind == "time") {
        answer = answer_time(header, request->payload, payload, exports, fatal);
      } else if (kind == "prepare_run") {
        answer = answer_prepare_run(header, request->payload, socket);
      } else if (kind == "run") {
        answer = answer_run(fatal);
      } else if (kind == "run_digests") {
        answer = answer_run_digests(header);
      } else if (kind == "run_output") {
        answer = answer_run_output(header, payload, exports);
      } else {
        throw std::runtime_error("unknown request kind '" + kind + "'");
      }
    } catch (const std::exception& error) {
      answer = response_header();
      answer["error"] = error.what();
    }
    if (!answer.is_null()) send_answer(answer, payload);
    if (fatal) return 3;
    // A case's timing done (its samples, or its run back to back handed over): the memory of its
    // calls back to the device, for the other workers and the supervisor (timing.h).
    if (kind == "run_output" && run_outputs().empty()) last_run_memory().reset();  // its copies are done: answered
    if (gpu && (kind == "time" || (kind == "run_output" && run_outputs().empty()))) {
      release_cached_device_memory(c10::Device(c10::DeviceType::CUDA, 0));
    }
    // Once the supervisor has the listing, while it prepares its first case (0.1 s of libtorch's
    // threads on the 2-core machine, 0.2 s of CUDA on an H100).
    if (listed) get_ready();
  }
}

}  // namespace backendbench
