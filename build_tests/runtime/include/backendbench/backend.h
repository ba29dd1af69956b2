// The one Backend concept: something with a name and a device that can run an operator on a
// stack of inputs. The reference (aten), each kernel of a kernel library (generated_kernels/,
// loaded at run time from its shared library), and the calibration backends of ./bench are
// Backends; so will be a dispatcher-registered override, a Python kernel or a freshly built
// single kernel, each added by one registration (BackendRegistry::add) and nothing else.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backendbench/cases.h"
#include "backendbench/kernel_binding.h"
#include "backendbench/observe.h"
#include "backendbench/settings.h"

namespace backendbench {

using Stack = std::vector<c10::IValue>;
using BoundCall = std::function<Stack(Stack)>;

// Where a stack of inputs came from: materialize(schema, *spec, device, draw, salt) (inputs.h),
// which is deterministic. A kernel worker given it makes the same values itself, so that the
// inputs need not cross the process (what crosses costs what the tensors weigh).
struct InputDraw {
  const CaseSpec* spec = nullptr;
  int draw = 0;
  uint64_t salt = 0;
  // A check that timing of the same draws follows (./bench): a kernel worker keeps the inputs it
  // made for the call and times on them instead of making them again.
  bool timed_next = false;
};

class Backend {
 public:
  enum class Kind {
    kReference,    // aten: the reference standing in as a kernel (validates the harness; not scored)
    kKernel,       // a replacement of the operator: every check applies, including no fallback to it
    kCalibration,  // ./bench's instruments (aten_self, aten_twice): timed and scored, never in tests
  };

  Backend(std::string name, Kind kind) : name_(std::move(name)), kind_(kind) {}
  virtual ~Backend() = default;

  const std::string& name() const { return name_; }  // aten, impl<N>, aten_self, ...
  Kind kind() const { return kind_; }
  virtual c10::Device device(const Settings& settings) const = 0;
  virtual std::string source() const { return ""; }  // the kernel file, for messages and verdicts
  // An in-place/out= variant served by the functional operator's kernel: registered for the
  // operator only where it has no kernel of its own.
  virtual bool is_derived() const { return false; }

  // Runs the operator on `stack` (its inputs in schema order); returns its outputs.
  virtual Stack call(const c10::OperatorHandle& op, Stack stack, c10::Device device) const = 0;
  // call(), observed where it runs (observe.h): by default in this process; a backend whose code
  // runs in a kernel worker (kernel_workers.h) is observed there, and the tensors of `stack` hold what
  // the call left in them when it returns, as with a call in this process. `drawn_from`, when
  // given, says how `stack`'s values were made (a worker then makes them itself).
  struct ObservedCall {
    Stack outputs;
    InsideObservations inside;
  };
  virtual ObservedCall call_observed(const c10::OperatorHandle& op, Stack stack, c10::Device device,
                                     const InputDraw* drawn_from = nullptr) const;
  // A case's draws, called in turn by next(), each with the caller's own work overlapped:
  // `prepare` makes this process's inputs for the draw (and whatever else the caller needs
  // first, the reference's answer) and returns the stack to call on, or nullptr when the case was
  // decided while preparing (nothing is returned then, and no later draw is asked for). By
  // default each next() runs `prepare`, then call_observed; a backend whose calls run elsewhere
  // may start them before (its worker making the same inputs itself, every draw back to back),
  // so that its calls overlap the caller's preparing and checking. `prepare` must not throw.
  class DrawCalls {
   public:
    DrawCalls(const c10::OperatorHandle& op, c10::Device device, std::vector<InputDraw> draws)
        : op_(op), device_(device), draws_(std::move(draws)) {}
    virtual ~DrawCalls() = default;
    virtual std::optional<ObservedCall> next(const std::function<Stack*()>& prepare) = 0;
    // What the reference answered for the draw `prepare` is making, told by the check as it
    // prepares it: a kernel worker's answer may carry no more than a small multiple of those
    // outputs' and the draw's inputs' bytes (kernel_workers.h), so no answer makes the supervisor keep
    // what its request cannot need.
    void expect_outputs(const Stack& outputs);

   protected:
    uint64_t expected_output_bytes_ = 0;
    // The index of the draw this next() calls; throws std::logic_error past the last.
    size_t take_next() {
      if (next_ >= draws_.size()) throw std::logic_error("more draws asked for than were given");
      return next_++;
    }
    c10::OperatorHandle op_;
    c10::Device device_;
    std::vector<InputDraw> draws_;

   private:
    size_t next_ = 0;
  };
  virtual std::unique_ptr<DrawCalls> call_draws(const c10::OperatorHandle& op, c10::Device device,
                                                std::vector<InputDraw> draws) const;
  // A call for timing, prepared once per case outside the timed region (`inputs`: the case's).
  virtual BoundCall bind(const c10::OperatorHandle& op, const Stack& inputs, c10::Device device) const;
  // The kernel as the dispatcher can register it (overrides.h); absent for backends that are
  // not a kernel of their own (the reference, the calibration backends).
  virtual std::optional<DispatcherKernel> dispatcher_kernel() const { return std::nullopt; }
  // Why the backend cannot run any case, decided before the first (a Python kernel whose module
  // does not load fails; an op library that cannot run on this machine is skipped); absent when
  // it can run.
  struct Unusable {
    bool skip = false;
    std::string reason;
  };
  virtual std::optional<Unusable> unusable() const { return std::nullopt; }
  // A kernel called through the embedded interpreter: its launch costs host time of its own,
  // which the timing must not read as hidden work (Timer::hidden_work).
  virtual bool launches_from_python() const { return false; }
  // Whether its code runs in a kernel worker (kernel_workers.h), not in this process.
  virtual bool runs_in_worker() const { return false; }

 private:
  std::string name_;
  Kind kind_;
};

class BackendRegistry {
 public:
  // A backend for every operator (the reference, calibration backends).
  void add(std::unique_ptr<Backend> backend);
  // A backend for one operator (a kernel), by display name (add.Tensor).
  void add(const std::string& op_display, std::unique_ptr<Backend> backend);

  const Backend& reference() const;
  // The reference first, then the operator's own backends by name (impl1, impl2, ..., impl10;
  // derived ones only where there is no other), then, when asked, the calibration backends.
  std::vector<const Backend*> for_operator(const std::string& op_display, bool with_calibration) const;
  const Backend* find(const std::string& op_display, const std::string& name) const;
  // The operators that have backends of their own (display names, sorted).
  std::vector<std::string> operators() const;
  // Forgets every backend whose code runs in a kernel worker (kernel_workers.h: stop_kernel_workers).
  void remove_worker_backends();

 private:
  std::vector<std::unique_ptr<Backend>> generic_;
  std::map<std::string, std::vector<std::unique_ptr<Backend>>> per_operator_;
};

// The process's registry, holding the reference and the calibration backends from the start.
BackendRegistry& backends();

// The bytes of the tensors a stack holds (in lists and tuples too), as numel × element size.
uint64_t stack_bytes(const Stack& stack);

// Registers the kernels of one kernel library (a shared library built from a binding, which
// exports backendbench_kernel_entries). Throws std::runtime_error naming the path and the cause.
void load_kernel_library(const std::string& path);
// Registers the kernels an entries function lists (a kernel library's, or the index of the one
// library holding every kernel); `where` names it in errors.
void add_kernel_entries(KernelEntries entries, const std::string& where);
// Every kernel a manifest lists, one per line: a kernel library's path, or a line of the Python
// bridge (python_bridge.h: a .py kernel, an op library); with `line` >= 0 only the kernels of that
// non-empty line (a worker holds one kernel: kernel_imports.h, kernel_manifest_line). A missing
// manifest or line is an error.
void load_kernel_manifest(const std::string& path, int line = -1);
// Starts the Python bridge's interpreter and imports torch (and Triton, where it is installed)
// now, before any kernel is loaded: what a spare worker does for a job of Python kernels.
// Throws std::runtime_error where this build has no bridge or Python does not start.
void start_python_kernels();

}  // namespace backendbench
