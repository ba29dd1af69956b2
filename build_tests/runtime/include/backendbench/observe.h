// What the harness observes around a call, beyond its outputs: the ATen operators it
// dispatches, the arguments it may write, the process-wide state the reference depends on, the
// threads it leaves running, and the device work it leaves queued.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>

#include <functional>
#include <string>
#include <vector>

namespace backendbench {

// The ATen operators dispatched on this thread while a call runs, recorded with a thread-local
// RecordFunction callback.
struct OperatorCalls {
  std::vector<std::string> dispatched;  // every one (aten::name.overload), nested ones too, in order
  // The ones that compute (operator_facts.h: computes_nothing) within no other that computes,
  // each once, in order: the work ATen did for the call rather than the call's own code.
  std::vector<std::string> computing;
  double computing_seconds = 0;  // host time inside those outermost computing operators
  double seconds = 0;            // host time of the whole call
  // Operators dispatched on the process's other threads while the call ran (threads it started
  // or handed work to, ATen's pool running an operator's chunks), which an observer of the
  // calling thread alone does not see; each once, in the order first seen. One call is recorded
  // at a time.
  std::vector<std::string> dispatched_elsewhere;
};
OperatorCalls record_operator_calls(const std::function<void()>& call);

// Positions of the arguments the schema marks as written (Tensor(a!)), and of `also_written`
// (names of arguments the operator writes without saying so).
std::vector<size_t> written_arguments(const c10::FunctionSchema& schema, const std::vector<std::string>& also_written = {});

// The process-wide settings an ATen reference depends on. A kernel that changes one (threads,
// TF32 and cuDNN flags, matmul precision, default dtype, grad mode, deterministic algorithms)
// changes what later references compute; capture() before and after each call, compare, and
// restore() the state before.
struct GlobalState {
  int threads = 0;
  bool grad_enabled = true;
  std::string default_dtype;
  bool tf32_cublas = false, tf32_cudnn = false;
  int matmul_precision = 0;
  int fp16_reduction_cublas = 0, bf16_reduction_cublas = 0;
  bool fp16_accumulation_cublas = false;
  bool cudnn_enabled = true, cudnn_benchmark = false, cudnn_deterministic = false;
  bool deterministic_algorithms = false, deterministic_warn_only = false;

  static GlobalState capture();
  void restore() const;
  // "name: before -> after" for every field that differs from `after`.
  std::vector<std::string> differences(const GlobalState& after) const;
};

// What only the process a call runs in can see of it. Measured where the call runs: in a kernel
// worker (kernel_workers.h) it comes back as data the kernel's process wrote, so the checks that read it
// can only fail a case (a worker that reports nothing has hidden it, not passed).
struct InsideObservations {
  std::vector<std::string> dispatched;     // ATen operators the call dispatched, in order
  std::vector<std::string> dispatched_elsewhere;  // OperatorCalls::dispatched_elsewhere
  std::vector<std::string> aten_computing; // OperatorCalls::computing
  // The share of the call's host time spent in ATen operators that compute (0 to 1); < 0: not
  // measured. On CUDA it is the launches' share, not the device's.
  double aten_share = -1;
  std::vector<std::string> state_changes;  // GlobalState::differences across the call
  std::vector<int> threads_left;           // threads it started and left running
  std::string late_device_writes;          // work it left on another stream: "" if none
};

// Runs `call` on this thread, observed: the ATen operators it dispatches, the global state
// before and after (restored after, so one offender cannot change later references), the
// threads it leaves, and (on CUDA) the work it leaves queued; waits for every device after it.
// `outputs` receives what `call` returned. Exceptions from `call` propagate (state restored).
InsideObservations observe_call(const std::function<std::vector<c10::IValue>()>& call, std::vector<c10::IValue>& outputs,
                                c10::Device device);

// Ids of this process's threads (/proc/self/task).
std::vector<int> process_threads();
// Threads in `after` that were not in `before` and are still running after waiting up to
// `grace_ms` for them to end: work a call left behind.
std::vector<int> threads_left_running(const std::vector<int>& before, int grace_ms);

// Waits until every CUDA device has finished all queued work, on every stream.
void synchronize_all_devices();

// Waits for the current stream of `device` (a CUDA device; 0 otherwise), then counts the
// device's pooled streams (c10's getStreamFromPool, low and high priority: 32 each) that still
// have work: work a call left on a side stream without making the current stream wait for it.
// Work a kernel joins back to the current stream is finished by then and is not counted.
int pooled_streams_busy_after_current(c10::Device device);

// Whether the current stream of `device` (a CUDA device) has no queued work; true otherwise.
bool current_stream_idle(c10::Device device);

}  // namespace backendbench
