// Observation around a call; see observe.h.
#include "backendbench/observe.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "backendbench/compare.h"
#include "backendbench/operator_facts.h"
#include "backendbench/tensor_values.h"

namespace backendbench {
namespace {

using Clock = std::chrono::steady_clock;

// A thread that outlives a call is work the call left behind, unless it is one that libtorch or
// the CUDA driver starts on first use: start the intra-op pool, and the CUDA context (the wait
// after every call touches it; on a GPU machine its first use started 2 driver threads inside a
// CPU kernel's window), before any call is observed.
void start_background_threads() {
  static std::once_flag started;
  std::call_once(started, [] {
    at::parallel_for(0, int64_t{1} << 16, 1, [](int64_t, int64_t) {});
    synchronize_all_devices();
  });
}

// Outputs as stored: a sparse COO tensor as its index and value tensors. Comparing two reads of
// an uncoalesced one densified sums its duplicate entries with atomics, in an order that differs
// between the reads (TorchBench's f16 _sparse_coo_tensor_with_dims_and_tensors: an ulp apart),
// which would read as a late write.
std::vector<c10::IValue> stored_form(const std::vector<c10::IValue>& outputs) {
  std::vector<c10::IValue> stored;
  for (const c10::IValue& output : outputs) {
    if (output.isTensor() && output.toTensor().defined() && output.toTensor().layout() == c10::kSparse) {
      const at::Tensor& sparse = output.toTensor();
      stored.emplace_back(sparse._indices());
      stored.emplace_back(sparse._values());
    } else {
      stored.push_back(output);
    }
  }
  return stored;
}

// Waits for every device after a call. On CUDA, describes the work the call left on another
// stream: pooled streams still busy once the current stream is done, and what differs between
// the outputs as a caller on the current stream sees them (a copy queued right after the call
// returns, with no wait in between, as the caller's next operation would be) and the outputs
// once every stream of every device is done. "" when there is none (or on the CPU).
std::string wait_for_late_device_writes(const std::vector<c10::IValue>& outputs, c10::Device device) {
  // Each probe is soonest where it matters: with nothing left on the current stream, the pooled
  // streams are asked at once (hidden work of a few microseconds is still running then), else
  // the early copy is queued first and the streams are asked once the current one is done.
  const bool current_idle = current_stream_idle(device);
  int busy_streams = current_idle ? pooled_streams_busy_after_current(device) : 0;
  const std::vector<c10::IValue> early = device.is_cuda() ? clone_inputs(outputs) : std::vector<c10::IValue>();
  if (!current_idle) busy_streams = pooled_streams_busy_after_current(device);
  synchronize_all_devices();
  if (!device.is_cuda()) return "";
  std::string found;
  if (busy_streams > 0) {
    found = std::to_string(busy_streams) + " other stream(s) still running when the current stream was done";
  }
  const Comparison comparison = compare_outputs(stored_form(early), stored_form(outputs), CompareOptions());
  if (!comparison.equal) {
    found += (found.empty() ? "" : "; ") + std::string("its outputs changed after the current stream was done: ") +
             comparison.message;
  }
  return found;
}

}  // namespace

InsideObservations observe_call(const std::function<std::vector<c10::IValue>()>& call, std::vector<c10::IValue>& outputs,
                                c10::Device device) {
  InsideObservations inside;
  start_background_threads();
  const GlobalState before = GlobalState::capture();
  const std::vector<int> threads_before = process_threads();
  try {
    OperatorCalls calls = record_operator_calls([&] { outputs = call(); });
    inside.dispatched = std::move(calls.dispatched);
    inside.dispatched_elsewhere = std::move(calls.dispatched_elsewhere);
    inside.aten_computing = std::move(calls.computing);
    inside.aten_share = calls.seconds > 0 ? std::min(1.0, calls.computing_seconds / calls.seconds) : 0;
  } catch (...) {
    before.restore();
    throw;
  }
  inside.late_device_writes = wait_for_late_device_writes(outputs, device);
  inside.state_changes = before.differences(GlobalState::capture());
  before.restore();  // one offender must not change what later references compute
  inside.threads_left = threads_left_running(threads_before, /*grace_ms=*/50);
  return inside;
}


OperatorCalls record_operator_calls(const std::function<void()>& call) {
  // Each operator's context says whether it is an outermost computing one, and when it began.
  // Outermost among the computing ones, not among all: a computing operator nested in one that
  // computes nothing (ATen's zero_ replaced at load by a kernel of its own that calls
  // clamp_min, say) is still ATen doing the work.
  struct Entered : at::ObserverContext {
    bool computing = false, outermost_computing = false;
    Clock::time_point began;
  };
  thread_local OperatorCalls* sink = nullptr;
  thread_local int computing_depth = 0;
  OperatorCalls calls;
  sink = &calls;
  computing_depth = 0;
  const at::CallbackHandle handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction& function) -> std::unique_ptr<at::ObserverContext> {
            auto entered = std::make_unique<Entered>();
            if (sink == nullptr) return entered;
            if (auto op = function.operator_name()) {
              const std::string name = op->name + (op->overload_name.empty() ? "" : "." + op->overload_name);
              sink->dispatched.push_back(name);
              entered->computing = !computes_nothing(name);
              if (entered->computing && computing_depth++ == 0) {
                entered->outermost_computing = true;
                entered->began = Clock::now();
                if (std::find(sink->computing.begin(), sink->computing.end(), name) == sink->computing.end()) {
                  sink->computing.push_back(name);
                }
              }
            }
            return entered;
          },
          [](const at::RecordFunction&, at::ObserverContext* context) {
            auto* entered = static_cast<Entered*>(context);
            if (sink == nullptr || entered == nullptr || !entered->computing) return;
            --computing_depth;
            if (entered->outermost_computing) {
              sink->computing_seconds += std::chrono::duration<double>(Clock::now() - entered->began).count();
            }
          })
          .scopes({at::RecordScope::FUNCTION}));
  // Every other thread of the process: a call that runs ATen on a thread of its own (a Python
  // kernel's threading.Thread, a std::thread) is seen there. The calling thread's own observer
  // above has its operators (its sink is set), so this one passes them over.
  static std::mutex elsewhere_mutex;
  static std::vector<std::string>* elsewhere = nullptr;
  {
    std::lock_guard<std::mutex> lock(elsewhere_mutex);
    elsewhere = &calls.dispatched_elsewhere;
  }
  const at::CallbackHandle everywhere = at::addGlobalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& function) -> std::unique_ptr<at::ObserverContext> {
        if (sink != nullptr) return nullptr;
        if (auto op = function.operator_name()) {
          std::lock_guard<std::mutex> lock(elsewhere_mutex);
          const std::string name = op->name + (op->overload_name.empty() ? "" : "." + op->overload_name);
          // Each once: a thread that dispatches in a loop cannot grow the answer beyond the
          // operators there are.
          if (elsewhere != nullptr && std::find(elsewhere->begin(), elsewhere->end(), name) == elsewhere->end()) {
            elsewhere->push_back(name);
          }
        }
        return nullptr;
      }).scopes({at::RecordScope::FUNCTION}));
  const auto stop = [&] {
    at::removeCallback(handle);
    at::removeCallback(everywhere);
    sink = nullptr;
    std::lock_guard<std::mutex> lock(elsewhere_mutex);
    elsewhere = nullptr;
  };
  const Clock::time_point began = Clock::now();
  try {
    call();
  } catch (...) {
    stop();
    throw;
  }
  calls.seconds = std::chrono::duration<double>(Clock::now() - began).count();
  stop();
  return calls;
}

std::vector<size_t> written_arguments(const c10::FunctionSchema& schema, const std::vector<std::string>& also_written) {
  std::vector<size_t> written;
  const auto& arguments = schema.arguments();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const bool annotated = arguments[i].alias_info() && arguments[i].alias_info()->isWrite();
    const bool listed = std::find(also_written.begin(), also_written.end(), arguments[i].name()) != also_written.end();
    if (annotated || listed) written.push_back(i);
  }
  return written;
}

GlobalState GlobalState::capture() {
  const at::Context& context = at::globalContext();
  GlobalState state;
  state.threads = at::get_num_threads();
  state.grad_enabled = c10::GradMode::is_enabled();
  state.default_dtype = std::string(c10::get_default_dtype().name());
  state.tf32_cublas = context.allowTF32CuBLAS();
  state.tf32_cudnn = context.allowTF32CuDNN();
  state.matmul_precision = static_cast<int>(context.float32MatmulPrecision());
  state.fp16_reduction_cublas = static_cast<int>(context.allowFP16ReductionCuBLAS());
  state.bf16_reduction_cublas = static_cast<int>(context.allowBF16ReductionCuBLAS());
  state.fp16_accumulation_cublas = context.allowFP16AccumulationCuBLAS();
  state.cudnn_enabled = context.userEnabledCuDNN();
  state.cudnn_benchmark = context.benchmarkCuDNN();
  state.cudnn_deterministic = context.deterministicCuDNN();
  state.deterministic_algorithms = context.deterministicAlgorithms();
  state.deterministic_warn_only = context.deterministicAlgorithmsWarnOnly();
  return state;
}

void GlobalState::restore() const {
  const GlobalState now = capture();
  if (now.differences(*this).empty()) return;
  at::Context& context = at::globalContext();
  if (now.threads != threads) at::set_num_threads(threads);
  c10::GradMode::set_enabled(grad_enabled);
  if (now.default_dtype != default_dtype) {
    c10::set_default_dtype(default_dtype == "double" ? caffe2::TypeMeta::Make<double>()
                           : default_dtype == "c10::Half" ? caffe2::TypeMeta::Make<c10::Half>()
                           : default_dtype == "c10::BFloat16" ? caffe2::TypeMeta::Make<c10::BFloat16>()
                                                              : caffe2::TypeMeta::Make<float>());
  }
  if (now.matmul_precision != matmul_precision) {
    static const char* const kPrecisions[] = {"highest", "high", "medium"};
    context.setFloat32MatmulPrecision(kPrecisions[std::clamp(matmul_precision, 0, 2)]);
  }
  if (now.tf32_cublas != tf32_cublas) context.setAllowTF32CuBLAS(tf32_cublas);
  if (now.tf32_cudnn != tf32_cudnn) context.setAllowTF32CuDNN(tf32_cudnn);
  // CuBLASReductionOption: 0 allows reduced precision (with split-K), 1 allows split-K only, 2 neither.
  if (now.fp16_reduction_cublas != fp16_reduction_cublas) {
    context.setAllowFP16ReductionCuBLAS(fp16_reduction_cublas == 0, fp16_reduction_cublas <= 1);
  }
  if (now.bf16_reduction_cublas != bf16_reduction_cublas) {
    context.setAllowBF16ReductionCuBLAS(bf16_reduction_cublas == 0, bf16_reduction_cublas <= 1);
  }
  if (now.fp16_accumulation_cublas != fp16_accumulation_cublas) context.setAllowFP16AccumulationCuBLAS(fp16_accumulation_cublas);
  context.setUserEnabledCuDNN(cudnn_enabled);
  context.setBenchmarkCuDNN(cudnn_benchmark);
  context.setDeterministicCuDNN(cudnn_deterministic);
  if (now.deterministic_algorithms != deterministic_algorithms || now.deterministic_warn_only != deterministic_warn_only) {
    context.setDeterministicAlgorithms(deterministic_algorithms, deterministic_warn_only);
  }
}

std::vector<std::string> GlobalState::differences(const GlobalState& after) const {
  std::vector<std::string> changed;
  auto compare = [&](const char* name, const auto& before_value, const auto& after_value) {
    if (before_value == after_value) return;
    std::ostringstream text;
    text << std::boolalpha << name << ": " << before_value << " -> " << after_value;
    changed.push_back(text.str());
  };
  compare("intra-op threads (at::get_num_threads)", threads, after.threads);
  compare("grad mode", grad_enabled, after.grad_enabled);
  compare("default dtype", default_dtype, after.default_dtype);
  compare("TF32 in cuBLAS matmuls", tf32_cublas, after.tf32_cublas);
  compare("TF32 in cuDNN", tf32_cudnn, after.tf32_cudnn);
  compare("float32 matmul precision", matmul_precision, after.matmul_precision);
  compare("fp16 reduced-precision reduction in cuBLAS", fp16_reduction_cublas, after.fp16_reduction_cublas);
  compare("bf16 reduced-precision reduction in cuBLAS", bf16_reduction_cublas, after.bf16_reduction_cublas);
  compare("fp16 accumulation in cuBLAS", fp16_accumulation_cublas, after.fp16_accumulation_cublas);
  compare("cuDNN enabled", cudnn_enabled, after.cudnn_enabled);
  compare("cuDNN benchmark mode", cudnn_benchmark, after.cudnn_benchmark);
  compare("cuDNN deterministic", cudnn_deterministic, after.cudnn_deterministic);
  compare("deterministic algorithms", deterministic_algorithms, after.deterministic_algorithms);
  compare("deterministic algorithms warn-only", deterministic_warn_only, after.deterministic_warn_only);
  return changed;
}

std::vector<int> process_threads() {
  std::vector<int> threads;
  if (DIR* tasks = opendir("/proc/self/task")) {
    while (const dirent* entry = readdir(tasks)) {
      if (entry->d_name[0] != '.') threads.push_back(std::atoi(entry->d_name));
    }
    closedir(tasks);
  }
  std::sort(threads.begin(), threads.end());
  return threads;
}

std::vector<int> threads_left_running(const std::vector<int>& before, int grace_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  for (;;) {
    std::vector<int> left;
    for (int thread : process_threads()) {
      if (!std::binary_search(before.begin(), before.end(), thread)) left.push_back(thread);
    }
    if (left.empty() || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void synchronize_all_devices() {
  if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA)) return;
  const c10::impl::DeviceGuardImplInterface* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  for (c10::DeviceIndex d = 0; d < guard->deviceCount(); ++d) guard->synchronizeDevice(d);
}

namespace {

// CUDA's guard and `device` with its index, or no guard when `device` is not a CUDA device here.
std::pair<const c10::impl::DeviceGuardImplInterface*, c10::Device> cuda_guard_for(c10::Device device) {
  if (!device.is_cuda() || !c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA)) return {nullptr, device};
  const c10::impl::DeviceGuardImplInterface* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  return {guard, device.has_index() ? device : guard->getDevice()};
}

}  // namespace

bool current_stream_idle(c10::Device device) {
  const auto [guard, cuda] = cuda_guard_for(device);
  return guard == nullptr || guard->queryStream(guard->getStream(cuda));
}

int pooled_streams_busy_after_current(c10::Device device) {
  const auto [guard, cuda] = cuda_guard_for(device);
  if (guard == nullptr) return 0;
  guard->synchronizeStream(guard->getStream(cuda));
  // The pool hands its streams out round-robin, so 32 requests per priority visit each once.
  constexpr int kStreamsPerPool = 32;
  std::set<c10::StreamId> seen;
  int busy = 0;
  for (const bool high_priority : {false, true}) {
    for (int i = 0; i < kStreamsPerPool; ++i) {
      const c10::Stream stream = guard->getStreamFromGlobalPool(cuda, high_priority);
      if (seen.insert(stream.id()).second && !guard->queryStream(stream)) ++busy;
    }
  }
  return busy;
}

}  // namespace backendbench
