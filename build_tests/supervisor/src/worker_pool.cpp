// The kernel workers' pool, on the supervisor's side of the wall: starting, asking and stopping
// them, and the backends whose calls go to them; see kernel_workers.h.
#include "supervisor/kernel_workers.h"
#include "worker_pool.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/CachingDeviceAllocator.h>
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
#include "backendbench/build_paths.h"
#include "protocol/device_share.h"
#include "backendbench/files.h"
#include "backendbench/inputs.h"
#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"
#include "backendbench/processes.h"
#include "supervisor/run_start.h"
#include "backendbench/sandbox.h"
#include "backendbench/tensor_values.h"
#include "backendbench/kernel_imports.h"
#include "language/json_text.h"
#include "protocol/worker_protocol.h"

namespace backendbench {
namespace {

using nlohmann::json;
using worker::call_request;
using worker::draw_json;
using worker::request_header;
using worker::start_cuda_on;

// ---------------------------------------------------------------------------------------------
// Supervisor side.

// A worker that did not answer within the case timeout.
class WorkerHung : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One running worker process and the pipes to it.
struct WorkerProcess {
  pid_t pid = -1;
  int to = -1, from = -1;
  // Descriptors cross here: a GPU worker's device copies (device_share.h), the memory file of a
  // CPU worker's run (memory_file.h).
  int socket = -1;
  bool gpu = false;
  std::unique_ptr<worker::MessageReader> reader;  // of `from`
  // A GPU worker's slots, mapped here; they go with the worker.
  std::unique_ptr<device_share::Imports> imports = std::make_unique<device_share::Imports>();
  std::string log_path;
  int log = -1;  // the log, open for reading: what the worker printed since the last request
  // A spare (started before its job): the folders it sees read-only, whether it started Python,
  // and whether it still waits for its `load` request.
  std::vector<std::string> spare_roots;
  bool spare_python = false;
  bool awaiting_load = false;
  int line = -1;  // the kernel manifest line it loads (a spare: the one its `load` names)
  // Its round trip, timed before its kernel code loaded (measure_round_trip); least < 0 until then.
  WorkerPoolRequests::RoundTrip round_trip;
  // A GPU worker's shared path, timed right after (measure_run_inputs_path); least < 0 where unused.
  WorkerPoolRequests::RoundTrip run_inputs_path;
  uint64_t last_used = 0;  // the pool's request count when it last served one
  // A GPU worker's processes, locked while another GPU worker's kernel is asked (give_gpu_to).
  std::unique_ptr<device_share::ProcessLocks> held;
  // The device memory it took in its own turns on the GPU (give_gpu_to: none can allocate while
  // another has the GPU), by this process's reading before and after each.
  int64_t gpu_bytes = 0;
};

// Workers kept running at once: a supervisor serving a folder of hundreds of kernels one job
// after another keeps a worker for each (one kernel per worker), so the least recently used is
// stopped before another starts past this many (each holds libtorch, and CUDA on a GPU).
constexpr size_t kMaxRunningWorkers = 8;

// The memory a GPU worker's shared path is probed with (measure_run_inputs_path): one page of
// the driver's granularity.
constexpr uint64_t kRunInputsProbeBytes = uint64_t{2} << 20;

// Bytes of a worker's output forwarded per request; the rest is counted, not printed.
constexpr size_t kForwardedOutputBytes = 64 << 10;

std::string died_of(int signal_number) {
  const SignalText signal = signal_text(signal_number);
  return std::string("died of ") + signal.prefix + signal.name + " (" + signal.description + ")";
}

// Whether child `pid` has not ended (without reaping it: stop() tells how it ended).
bool still_running(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return died_of(WTERMSIG(status));
  // bubblewrap, the sandbox's first process, passes on a signal that ended the worker as 128 + it.
  if (WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 65) {
    return died_of(WEXITSTATUS(status) - 128);
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

// The workers of this process: one per kernel manifest line (one kernel, kernel_imports.h) and
// device class, started on first use; no two kernels share a process.
class WorkerPool {
 public:
  // A worker: its device class (GPU or not) and the manifest line whose kernels it loads.
  using Key = std::pair<bool, int>;

  static WorkerPool& instance() {
    static WorkerPool* pool = new WorkerPool;  // never destroyed: workers end with this process
    return *pool;
  }

  void configure(const std::string& manifest, const Settings& settings) {
    configure_process(settings);
    manifest_ = manifest;
    // Workers kept from the job before (keep_between_jobs) serve this one only if it names the
    // same manifest, its files unchanged, under the same sandbox, and they still run.
    const std::string key = workers_key();
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [which, worker] : workers_) {
      if (worker.pid >= 0 && (key != workers_key_ || !still_running(worker.pid))) (void)stop(worker);
    }
    workers_key_ = key;
    // Which backends are op libraries is read here, from the manifest the build wrote, never
    // from a worker: only an op library may be skipped as unable to run on this machine.
    op_libraries_.clear();
    std::ifstream lines(manifest_);
    for (std::string line; std::getline(lines, line);) {
      std::stringstream words(line);
      std::string kind, name;
      if (words >> kind >> name && kind == "op-library") op_libraries_.insert(name);
    }
  }

  // What every worker of this process shares: the sandbox, the case timeout, the scratch root.
  void configure_process(const Settings& settings) {
    sandbox_ = settings.sandbox;
    run_inputs_shared_ = settings.cuda_run_inputs_shared;
    early_spare_ = replaces_spare_at_once_here(settings);
    timeout_ms_ = settings.case_timeout_seconds > 0 ? int64_t{settings.case_timeout_seconds} * 1000 : -1;
    if (root_.empty()) {
      root_ = files::temporary_directory() + "/backendbench_supervisor_" + std::to_string(getpid());
      files::make_directories(root_);
      // The workers' scratch folders and logs go with this process, however it ends normally
      // (the test executables end by quick_exit, test_main.cpp).
      static std::string* root = new std::string(root_);
      static void (*const remove_root)() = [] { files::remove_tree(*root); };
      std::atexit(remove_root);
      std::at_quick_exit(remove_root);
    }
    if (sandbox_) {
      const std::optional<std::string> found = bubblewrap_executable();
      if (!found) {
        throw std::runtime_error(
            "BACKENDBENCH_SANDBOX: error: kernels run sandboxed by bubblewrap, which is not installed; expected bwrap "
            "on PATH (Debian: apt install bubblewrap), or BACKENDBENCH_SANDBOX=none (backendbench run --no-sandbox) to run "
            "untrusted kernels unsandboxed");
      }
      bubblewrap_ = *found;
    }
  }

  // One request to the worker of `gpu`'s class; its response header (and payload into
  // `payload`, of at most `max_payload_bytes`; a request whose answer carries none, a null
  // `payload`, takes none). Throws std::runtime_error with the worker's last output when it fails.
  // `descriptors` go before it on the worker's socket, one datagram; the header says how many.
  json request(Key key, const json& header, const std::vector<char>& payload, std::vector<char>* response_payload,
               uint64_t max_payload_bytes = worker::kMaxPayloadBytes, const std::vector<int>& descriptors = {}) {
    std::lock_guard<std::mutex> lock(mutex_);
    WorkerProcess& worker = started_worker(key);
    return failing_worker(worker, [&] {
      if (!descriptors.empty()) {
        if (worker.socket < 0) throw worker::ProtocolError("it has no socket for descriptors");
        try {
          device_share::send_descriptors(worker.socket, descriptors);
        } catch (const std::runtime_error& error) {
          throw worker::ProtocolError(error.what());
        }
      }
      send(worker, header, payload);
      return receive(worker, response_payload, response_payload == nullptr ? 0 : max_payload_bytes);
    });
  }

  // A request the worker answers `answers` times, in order, until an answer that is an error (a
  // call of several draws, which the worker runs back to back while this process checks each
  // answer as it comes). The pool is held until every answer is read: next() reads the next, and
  // those left unread when it ends are read and dropped.
  class Answers {
   public:
    Answers(WorkerPool& pool, Key key, const json& header, size_t answers)
        : pool_(pool), lock_(pool.mutex_), key_(key), owed_(answers) {
      WorkerProcess& worker = pool_.started_worker(key_);
      pool_.failing_worker(worker, [&] {
        pool_.send(worker, header, {});
        return json();
      });
    }
    Answers(const Answers&) = delete;
    Answers& operator=(const Answers&) = delete;
    ~Answers() {
      try {
        drop_the_rest();
      } catch (const std::exception&) {
        // The worker was stopped (failing_worker); the next request starts another.
      }
    }
    // The answers still owed, read and dropped: a later request must not get them, and slots
    // they announce are mapped here. Throws as next() does when the worker fails meanwhile.
    void drop_the_rest(uint64_t max_payload_bytes = worker::kMaxPayloadBytes) {
      std::vector<char> dropped;
      while (owed_ > 0) (void)next(&dropped, max_payload_bytes);
    }
    // The next answer, as request() returns it, its payload of at most `max_payload_bytes`;
    // throws as request() does (none is owed after).
    json next(std::vector<char>* response_payload, uint64_t max_payload_bytes = worker::kMaxPayloadBytes) {
      if (owed_ == 0) throw std::logic_error("no answer owed");
      WorkerProcess& worker = pool_.workers_[key_];
      try {
        json answer =
            pool_.failing_worker(worker, [&] { return pool_.receive(worker, response_payload, max_payload_bytes); });
        owed_ = answer.contains("error") ? 0 : owed_ - 1;
        return answer;
      } catch (...) {
        owed_ = 0;
        throw;
      }
    }

   private:
    WorkerPool& pool_;
    std::unique_lock<std::mutex> lock_;
    Key key_;
    size_t owed_;
  };

 private:
  // The worker of `key`, started (or taken from the spares) if none runs. Under mutex_.
  WorkerProcess& started_worker(Key key) {
    const bool gpu = key.first;
    WorkerProcess& worker = workers_[key];
    worker.line = key.second;
    worker.last_used = ++requests_;
    if (gpu) give_gpu_to(key);
    if (worker.pid < 0) {
      std::vector<WorkerProcess*> running;
      for (auto& [other_key, other] : workers_) {
        if (other.pid >= 0 && other_key != key) running.push_back(&other);
      }
      if (running.size() >= kMaxRunningWorkers) {
        (void)stop(**std::min_element(running.begin(), running.end(), [](const WorkerProcess* a, const WorkerProcess* b) {
          return a->last_used < b->last_used;
        }));
      }
      WorkerProcess& spare = spares_[gpu];
      if (spare.pid >= 0 && manifest_under(spare.spare_roots)) {
        worker = std::move(spare);
        worker.line = key.second;
        spare = WorkerProcess{};
        if (early_spare_ && !keep_between_jobs_) {
          // Another like it starts now, while this job runs: a job that comes sooner after this
          // one's answer than a spare takes to start (a Python one's interpreter and torch) would
          // wait for it, and then so would every job after it.
          spare.spare_roots = worker.spare_roots;
          spare.spare_python = worker.spare_python;
          try {
            start(spare, gpu);
            spare.awaiting_load = true;
          } catch (const std::exception&) {
            spare = WorkerProcess{};  // the next start_spare tries again, and says why
          }
        }
        worker.spare_roots.clear();  // a worker started again after a crash is an ordinary one
        worker.spare_python = false;
      } else {
        start(worker, gpu);
      }
    }
    return worker;
  }

  // Only `key`'s worker runs on the GPU from now on (kernel_workers.h, kGpuRoomShare): every other
  // GPU worker's processes locked (or ended where they cannot be), the GPU found idle (or the
  // worker whose turn just ended ended), `key`'s own processes unlocked, then room made on the
  // device. Nothing is asked of a worker while it is locked. Under mutex_.
  void give_gpu_to(Key key) {
    if (gpu_holder_ == key) return;
    const std::optional<Key> previous = gpu_holder_;
    // What the worker that had the GPU took in its turn: what neither a worker nor anything else
    // held before it, less what is left now.
    const auto found_previous = previous ? workers_.find(*previous) : workers_.end();
    const WorkerProcess* last = found_previous == workers_.end() ? nullptr : &found_previous->second;
    if (last != nullptr && last->pid >= 0 && turn_unheld_bytes_ >= 0) {
      const int64_t unheld = gpu_unheld_bytes();
      if (unheld >= 0) found_previous->second.gpu_bytes = std::max<int64_t>(0, last->gpu_bytes + turn_unheld_bytes_ - unheld);
    }
    gpu_holder_ = key;
    WorkerProcess& asked = workers_[key];
    if (device_share::ProcessLocks::available()) {
      for (auto& [other_key, other] : workers_) {
        if (other_key == key || !other_key.first || other.pid < 0 || other.held) continue;
        auto locks = std::make_unique<device_share::ProcessLocks>(processes::tree_of(other.pid), kRunInputsLockMilliseconds);
        if (locks->locked()) {
          other.held = std::move(locks);
        } else if (!locks->none_use_cuda()) {
          end_held(other, "it could not be held while another kernel ran on the GPU (" + locks->error() + ")");
        }
      }
    }
    // The lock stops a process's CUDA calls, not its kernels already on the GPU (seen on an H100:
    // a spin a kernel left queued as its job ended ran on through the next kernel's turn, which
    // read 0.77x beside it against 1.00x alone). So the GPU must be idle too, before the asked
    // worker is let go: every GPU worker but the one whose turn just ended was held since the
    // GPU was last found idle, so work found now is that one's, which is ended (ending a process
    // ends its work on the GPU). Work that outlives it is no worker's of this process (another
    // user's, or a process that left a worker's tree unsandboxed): said once, and its runs are
    // refused while it lasts (hand_over_run_inputs).
    std::vector<WorkerProcess*> others;
    for (auto& [other_key, other] : workers_) {
      if (other_key != key && other_key.first && other.pid >= 0) others.push_back(&other);
    }
    if (!others.empty() && gpu_busy_now()) {
      if (last != nullptr && last->pid >= 0) {
        end_held(found_previous->second, "work of its kept the GPU busy after its turn (a kernel of its left running on the GPU?)");
      }
      if (gpu_busy_now() && !said_gpu_busy_) {
        said_gpu_busy_ = true;
        const GpuHoldersSaid holders = gpu_holders_now(-1);
        std::cerr << "backendbench: warning: the GPU is busy with work of a process other than this run's kernel workers"
                  << (holders.other_programs ? " (other programs hold it: " + holders.others + ")" : std::string()) << ": "
                  << "timings on it are noisy, and a run back to back is refused while it is\n";
      }
      others.erase(std::remove_if(others.begin(), others.end(), [](const WorkerProcess* w) { return w->pid < 0; }), others.end());
    }
    if (asked.held) {
      std::unique_ptr<device_share::ProcessLocks> held = std::move(asked.held);
      try {
        held->unlock();
      } catch (const std::runtime_error& error) {
        end_held(asked, std::string("its processes could not be unlocked for its kernel's next case: ") + error.what());
      }
    }
    if (others.empty()) {
      turn_unheld_bytes_ = gpu_unheld_bytes();
      return;
    }
    // Those that took the most in their turns first (a kernel that takes the GPU's memory is ended
    // before the honest beside it); then the least recently used.
    std::sort(others.begin(), others.end(), [](const WorkerProcess* a, const WorkerProcess* b) {
      return a->gpu_bytes != b->gpu_bytes ? a->gpu_bytes > b->gpu_bytes : a->last_used < b->last_used;
    });
    bool cache_emptied = false;
    make_gpu_room(
        others.size(),
        [&] {
          std::pair<uint64_t, uint64_t> memory = gpu_memory();
          if (memory.first * kGpuRoomShare < memory.second && !cache_emptied) {
            cache_emptied = true;  // what this process keeps cached counts as free first
            try {
              c10::getDeviceAllocator(c10::DeviceType::CUDA)->emptyCache();
            } catch (const std::exception&) {
            }
            memory = gpu_memory();
          }
          return memory;
        },
        [&](size_t i) {
          end_held(*others[i], "less than 1/" + std::to_string(kGpuRoomShare) +
                                   " of the GPU's memory was free for another kernel's case (one that takes the GPU's "
                                   "memory at load?)");
        });
    turn_unheld_bytes_ = gpu_unheld_bytes();
  }

  // The device's memory that no process but this one holds: its free bytes, and what this
  // process's caching allocator keeps (-1 where it cannot be read).
  static int64_t gpu_unheld_bytes() {
    try {
      c10::DeviceAllocator* allocator = c10::getDeviceAllocator(c10::DeviceType::CUDA);
      const auto [free, total] = allocator->getMemoryInfo(0);
      const auto kept = allocator->getDeviceStats(0).reserved_bytes[0].current;
      return static_cast<int64_t>(free) + std::max<int64_t>(0, kept);
    } catch (const std::exception&) {
      return -1;
    }
  }

  // The device's free and total bytes by this process's reading ({1, 1}, room enough, where it
  // cannot read them).
  static std::pair<uint64_t, uint64_t> gpu_memory() {
    try {
      const auto [free, total] = c10::getDeviceAllocator(c10::DeviceType::CUDA)->getMemoryInfo(0);
      if (total > 0) return {free, total};
    } catch (const std::exception&) {
    }
    return {1, 1};
  }

  // Ends `worker` while another kernel has the GPU, saying why on stderr, and waits (up to 2 s)
  // for every process of its tree to end, so that the driver has taken back what they held. It
  // starts again for its own kernel's next case. Under mutex_.
  void end_held(WorkerProcess& worker, const std::string& why) {
    if (worker.pid < 0) return;
    const std::vector<pid_t> tree = processes::tree_of(worker.pid);
    const std::vector<std::string> lines = kernel_manifest_lines(manifest_);
    const std::string named = worker.line >= 0 && static_cast<size_t>(worker.line) < lines.size()
                                  ? lines[static_cast<size_t>(worker.line)]
                                  : "manifest line " + std::to_string(worker.line);
    std::cerr << "backendbench: the kernel worker of " << named << " was ended: " << why
              << "; it starts again for its kernel's next case\n";
    (void)stop(worker);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (const pid_t pid : tree) {
      for (char state = processes::state_of(pid); state != '\0' && state != 'Z' && std::chrono::steady_clock::now() < give_up;
           state = processes::state_of(pid)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }

  // Runs `exchange` on `worker` (a spare's `load` first where it still waits for it). A worker
  // that fails (a protocol error, no answer within the case timeout) is stopped, and a
  // std::runtime_error (WorkerHung for a timeout) says why, with its last output. Under mutex_.
  json failing_worker(WorkerProcess& worker, const std::function<json()>& exchange) {
    std::string failure;
    bool hung = false;
    try {
      if (worker.round_trip.least_seconds < 0) {
        measure_round_trip(worker);
        measure_run_inputs_path(worker);
      }
      if (worker.awaiting_load) {
        worker.awaiting_load = false;
        json load = request_header("load");
        load["manifest"] = manifest_;
        load["line"] = worker.line;
        send(worker, load, {});
        (void)receive(worker, nullptr, 0);
      }
      return exchange();
    } catch (const worker::TimeoutError&) {
      hung = true;
      failure = "it did not answer within the case timeout (" + std::to_string(timeout_ms_ / 1000) +
                " s, --case-timeout / BACKENDBENCH_CASE_TIMEOUT); a hang? It was stopped";
    } catch (const worker::ProtocolError& error) {
      failure = error.what();
    }
    // A worker whose pipe closed is ending: its exit status (the signal that killed it) comes
    // a moment later, under load up to many milliseconds; a hung one is killed at once.
    const std::string ended = stop(worker, hung ? 0 : 2000);
    const std::string message =
        "the kernel worker failed: " + failure + (ended.empty() ? "" : "; it " + ended) + last_output(worker);
    if (hung) throw WorkerHung(message);
    throw std::runtime_error(message);
  }

 public:
  // Starts a spare worker of `gpu`'s class that sees `roots` read-only, unless one that does is
  // still waiting (a request whose manifest lay elsewhere did not take it).
  void start_spare(bool gpu, const std::vector<std::string>& roots, bool python) {
    std::lock_guard<std::mutex> lock(mutex_);
    WorkerProcess& spare = spares_[gpu];
    if (spare.pid >= 0 && spare.spare_roots == roots && spare.spare_python == python && still_running(spare.pid)) return;
    (void)stop(spare);
    spare.spare_roots = roots;
    spare.spare_python = python;
    start(spare, gpu);
    spare.awaiting_load = true;
  }

  // Stops every worker of the current manifest (spares stay).
  void stop_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [which, worker] : workers_) (void)stop(worker);
  }

  // From now on a job's workers outlive it, for the next job of the same manifest (configure),
  // and a spare a job takes is not replaced: the worker it becomes is kept instead.
  void keep_between_jobs() {
    std::lock_guard<std::mutex> lock(mutex_);
    keep_between_jobs_ = true;
  }

  // The first process (bubblewrap's, or the worker's) of every running worker and spare but
  // `except`'s: what is stopped while a kernel is timed (measure_in_worker).
  std::vector<pid_t> worker_pids_but(std::optional<Key> except) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<pid_t> pids;
    for (const auto& [key, worker] : workers_) {
      if (worker.pid >= 0 && (!except || key != *except)) pids.push_back(worker.pid);
    }
    for (const auto& [gpu, spare] : spares_) {
      if (spare.pid >= 0) pids.push_back(spare.pid);
    }
    return pids;
  }

  // `key`'s worker's round trip, timed before its kernel loaded (least < 0 when none runs).
  WorkerPoolRequests::RoundTrip round_trip(Key key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = workers_.find(key);
    return found == workers_.end() || found->second.pid < 0 ? WorkerPoolRequests::RoundTrip{} : found->second.round_trip;
  }

  // `key`'s worker's shared path, timed before its kernel loaded (-1 when unused or none runs).
  WorkerPoolRequests::RoundTrip run_inputs_path(Key key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = workers_.find(key);
    return found == workers_.end() || found->second.pid < 0 ? WorkerPoolRequests::RoundTrip{} : found->second.run_inputs_path;
  }

  // The first process of `key`'s worker; -1 when none runs.
  pid_t worker_pid(Key key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = workers_.find(key);
    return found == workers_.end() ? -1 : found->second.pid;
  }

  // Whether a worker of the last job still runs (for the next job, if it names the same manifest).
  bool has_running_worker() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::any_of(workers_.begin(), workers_.end(),
                       [](const auto& entry) { return entry.second.pid >= 0 && still_running(entry.second.pid); });
  }

 private:
  // One request to a running worker, and one response from it; each throws
  // worker::ProtocolError (or TimeoutError) when it fails.
  void send(WorkerProcess& worker, const json& header, const std::vector<char>& payload) {
    worker::write_message(worker.to, {json_text::dump(header), payload});
  }

  json receive(WorkerProcess& worker, std::vector<char>* response_payload, uint64_t max_payload_bytes) {
    std::optional<worker::Message> answer = worker.reader->read(timeout_ms_, max_payload_bytes);
    forward_log(worker);
    if (!answer) throw worker::ProtocolError("it closed its pipe without an answer");
    json parsed = json_text::parse_or_discarded(answer->header);
    if (!parsed.is_object() || parsed.value("schema", "") != worker::kResponseSchema ||
        parsed.value("version", 0) != worker::kProtocolVersion) {
      throw worker::ProtocolError("it answered with a message that is not a version " +
                                  std::to_string(worker::kProtocolVersion) + " worker response");
    }
    // Descriptors of new slots, sent before the message: one datagram of exactly as many.
    const json announced = parsed.value("shared_descriptors", json(0));
    const json new_slots = parsed.value("new_slots", json::array()), retired = parsed.value("retired_slots", json::array());
    if (!announced.is_number_integer() || announced.get<int64_t>() < 0 ||
        announced.get<int64_t>() > static_cast<int64_t>(device_share::kMaxDescriptors) ||
        (announced.get<int64_t>() > 0 && (worker.socket < 0 || !worker.gpu)) || !new_slots.is_array() || !retired.is_array() ||
        new_slots.size() != announced.get<size_t>()) {
      throw worker::ProtocolError("it announced descriptors it cannot send");
    }
    device_share::Descriptors received;
    try {
      received = device_share::Descriptors(
          device_share::receive_descriptors(worker.socket, announced.get<size_t>(), /*timeout_ms=*/5000));
      for (const json& slot : retired) {
        if (!slot.is_number_unsigned()) throw std::runtime_error("a retired slot that is not an id");
        worker.imports->retire(slot.get<uint64_t>());
      }
      for (size_t i = 0; i < new_slots.size(); ++i) {
        const json& slot = new_slots[i];
        if (!slot.is_array() || slot.size() != 2 || !slot[0].is_number_unsigned() || !slot[1].is_number_unsigned()) {
          throw std::runtime_error("a new slot that is not [id, bytes]");
        }
        worker.imports->adopt(slot[0].get<uint64_t>(), received.get()[i], slot[1].get<uint64_t>(),
                              c10::Device(c10::DeviceType::CUDA, 0));
      }
    } catch (const std::runtime_error& error) {
      throw worker::ProtocolError(error.what());
    }
    if (response_payload != nullptr) *response_payload = std::move(answer->payload);
    return parsed;
  }

 public:
  bool is_op_library(const std::string& backend) const { return op_libraries_.count(backend) > 0; }

  // The slots of a GPU worker's device copies, as this process mapped them.
  const device_share::Imports& gpu_imports(int line) { return *workers_[Key{true, line}].imports; }

  // Which worker answers the questions about kernels (list, unusable): the one the run's calls
  // go to, so that a CUDA run of CUDA kernels starts one worker, not a CPU one besides.
  void set_questions_on_gpu(bool gpu) { questions_on_gpu_ = gpu; }
  bool questions_on_gpu() const { return questions_on_gpu_; }

 private:
  void start(WorkerProcess& worker, bool gpu) {
    const int number = ++started_;
    // A sandboxed worker's scratch is a memory file system inside its sandbox; an unsandboxed
    // one's, a folder of this process's.
    const std::string scratch = sandbox_ ? SandboxPolicy::kScratch : root_ + "/scratch_" + std::to_string(number);
    if (!sandbox_) {
      for (const char* folder : {"", "/home", "/tmp", "/cache"}) files::make_directories(scratch + folder);
    }
    worker.log_path = root_ + "/worker_" + std::to_string(number) + ".log";
    const bool spare = !worker.spare_roots.empty();
    std::vector<std::string> command = {build_paths::worker_executable(), "--manifest", manifest_, "--line",
                                        std::to_string(worker.line)};
    if (spare) command = {build_paths::worker_executable(), "--spare"};
    if (spare && worker.spare_python) command.push_back("--python");
    // A GPU worker hands large outputs over as device copies, a CPU worker is handed its run's
    // inputs in a memory file: their descriptors need a socket.
    int sockets[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sockets) != 0) {
      throw std::runtime_error(std::string("cannot make the kernel worker's socket: ") + std::strerror(errno));
    }
    command.insert(command.end(), {"--socket", "3"});
    if (gpu) command.push_back("--gpu");
    const std::map<std::string, std::string> environment = sandbox_environment(scratch);
    std::vector<std::string> argv = command;
    if (sandbox_) {
      SandboxPolicy policy;
      policy.gpu = gpu;
      policy.environment = environment;
      policy.read_only = loaded_library_folders();
      policy.read_only.push_back(build_paths::worker_executable());
      if (spare) {
        // What its job's manifest may name (manifest_under): the manifest is not known yet.
        for (const std::string& root : worker.spare_roots) policy.read_only.push_back(root);
      } else {
        policy.read_only.push_back(manifest_);
        for (const std::string& path : manifest_paths()) policy.read_only.push_back(path);
      }
      if (const auto it = environment.find("PYTHONPATH"); it != environment.end()) {
        std::stringstream folders(it->second);
        for (std::string folder; std::getline(folders, folder, ':');) policy.read_only.push_back(folder);
      }
      if (const char* package = build_paths::python_package_dir()) policy.read_only.push_back(package);
      argv = sandboxed_command(bubblewrap_, policy, command);
    }
    std::vector<std::string> environment_lines;
    for (const auto& [name, value] : environment) environment_lines.push_back(name + "=" + value);
    std::vector<char*> argv_c, env_c;
    for (std::string& argument : argv) argv_c.push_back(argument.data());
    argv_c.push_back(nullptr);
    for (std::string& line : environment_lines) env_c.push_back(line.data());
    env_c.push_back(nullptr);
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
      throw std::runtime_error(std::string("cannot make the kernel worker's pipes: ") + std::strerror(errno));
    }
    // Tensors cross in these pipes: 1 MiB buffers (Linux's default limit for a user) instead of
    // 64 KiB mean fewer switches between the two processes.
    for (const int fd : {to_child[1], from_child[0]}) (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
    const int log = ::open(worker.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    worker.log = ::open(worker.log_path.c_str(), O_RDONLY | O_CLOEXEC);
    const long memory = sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
    const pid_t pid = fork();
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec: this process has threads.
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      dup2(log >= 0 ? log : 2, 2);
      if (sockets[1] >= 0) dup2(sockets[1], 3);  // after 0-2: whatever 3 was is not needed any more
      syscall(SYS_close_range, sockets[1] >= 0 ? 4 : 3, ~0U, 0);  // no descriptor of the supervisor's reaches the worker
      prctl(PR_SET_PDEATHSIG, SIGKILL);     // it dies with its supervisor
      const rlimit files_limit{4096, 4096}, no_core{0, 0}, file_size{rlim_t{1} << 30, rlim_t{1} << 30};
      setrlimit(RLIMIT_NOFILE, &files_limit);
      setrlimit(RLIMIT_CORE, &no_core);
      setrlimit(RLIMIT_FSIZE, &file_size);
      if (!gpu && memory > 0) {
        // CUDA reserves far more address space than it uses: only CPU workers get this limit.
        const rlimit address_space{static_cast<rlim_t>(memory) / 4 * 3, static_cast<rlim_t>(memory) / 4 * 3};
        setrlimit(RLIMIT_AS, &address_space);
      }
      const rlimit processes{4096, 4096};  // not enforced for root: the PID namespace ends them all
      setrlimit(RLIMIT_NPROC, &processes);
      execve(argv_c[0], argv_c.data(), env_c.data());
      const char message[] = "backendbench: cannot start the kernel worker\n";
      (void)!::write(2, message, sizeof(message) - 1);
      _exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    if (sockets[1] >= 0) ::close(sockets[1]);
    if (log >= 0) ::close(log);
    if (pid < 0) {
      ::close(to_child[1]);
      ::close(from_child[0]);
      if (sockets[0] >= 0) ::close(sockets[0]);
      throw std::runtime_error(std::string("cannot start the kernel worker: ") + std::strerror(errno));
    }
    worker.pid = pid;
    worker.to = to_child[1];
    worker.from = from_child[0];
    worker.reader = std::make_unique<worker::MessageReader>(worker.from);
    worker.socket = sockets[0];
    worker.gpu = gpu;
  }

  // Times `worker`'s round trip: kRoundTripProbes requests of `round_trip`, which a worker answers
  // only before it loads kernel code (serve.h), after one that waits for the worker to start.
  // Throws worker::ProtocolError (or TimeoutError) when the worker fails or refuses.
  void measure_round_trip(WorkerProcess& worker) {
    std::vector<double> seconds;
    for (int probe = 0; probe <= WorkerPoolRequests::kRoundTripProbes; ++probe) {
      const auto sent = std::chrono::steady_clock::now();
      send(worker, request_header("round_trip"), {});
      const json answer = receive(worker, nullptr, 0);
      if (answer.contains("error")) {
        throw worker::ProtocolError("it refused 'round_trip' before its kernel loaded: " + json_text::dump(answer["error"]));
      }
      if (probe > 0) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count());
    }
    std::sort(seconds.begin(), seconds.end());
    worker.round_trip = {seconds.front(), seconds[seconds.size() / 2]};
  }

  // Times `worker`'s shared path (WorkerPoolRequests::run_inputs_path) right after its round trip,
  // before its kernel code loads. Throws worker::ProtocolError (or TimeoutError) when the worker
  // fails or refuses; a probe that cannot run marks the path refused (kRunInputsPathRefused).
  void measure_run_inputs_path(WorkerProcess& worker) {
    worker.run_inputs_path = {};
    const c10::Device device(c10::DeviceType::CUDA, 0);
    if (!run_inputs_shared_ || !worker.gpu || worker.socket < 0 || !device_share::available(device) ||
        !device_share::one_process_at_a_time(device) || !device_share::ProcessLocks::available()) {
      return;
    }
    const WorkerPoolRequests::RoundTrip refused_path{WorkerPoolRequests::kRunInputsPathRefused,
                                                     WorkerPoolRequests::kRunInputsPathRefused};
    std::shared_ptr<device_share::DeviceMemoryFile> memory;
    try {
      memory = device_share::DeviceMemoryFile::create(kRunInputsProbeBytes, device);
    } catch (const std::runtime_error&) {
      worker.run_inputs_path = refused_path;
      return;
    }
    const auto refused = [](const json& answer) {
      if (answer.contains("error")) {
        throw worker::ProtocolError("it refused 'run_inputs_probe' before its kernel loaded: " + json_text::dump(answer["error"]));
      }
    };
    json adopt = request_header("run_inputs_probe");
    adopt["memory_file_bytes"] = memory->bytes();
    try {
      device_share::send_descriptors(worker.socket, {memory->descriptor()});
    } catch (const std::runtime_error& error) {
      throw worker::ProtocolError(error.what());
    }
    send(worker, adopt, {});
    refused(receive(worker, nullptr, 0));
    at::Tensor bytes = at::from_blob(memory->data(), {static_cast<int64_t>(memory->bytes())},
                                     at::TensorOptions().dtype(at::kByte).device(device));
    std::vector<double> seconds;
    for (int probe = 0; probe <= WorkerPoolRequests::kRoundTripProbes; ++probe) {
      RunInputsHandOver handed;
      try {
        handed = hand_over_run_inputs(worker.pid, [&] {
          bytes.fill_(probe);
          synchronize_all_devices();
        });
      } catch (const std::runtime_error&) {
        worker.run_inputs_path = refused_path;  // an unlock refused
        return;
      }
      if (!handed.refused.empty()) {
        worker.run_inputs_path = refused_path;
        return;
      }
      send(worker, request_header("run_inputs_probe"), {});
      refused(receive(worker, nullptr, 0));
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - handed.clock_started).count();
      if (probe > 0) seconds.push_back(took - worker.round_trip.least_seconds);  // the first starts what the others reuse
    }
    std::sort(seconds.begin(), seconds.end());
    worker.run_inputs_path = {std::max(0.0, seconds.front()), std::max(0.0, seconds[seconds.size() / 2])};
  }

  // Stops `worker`; says how it ended ("" when it was still running and was killed).
  // Ends the worker: waits up to `grace_ms` for it to end by itself (its status is then told),
  // then kills it.
  std::string stop(WorkerProcess& worker, int grace_ms = 0) {
    if (worker.pid < 0) return "";
    ::close(worker.to);
    ::close(worker.from);
    if (worker.socket >= 0) ::close(worker.socket);
    worker.socket = -1;
    worker.imports->clear();
    if (worker.log >= 0) ::close(worker.log);
    worker.log = -1;
    int status = 0;
    std::string ended;
    bool exited = waitpid(worker.pid, &status, WNOHANG) == worker.pid;
    for (int waited = 0; !exited && waited < grace_ms; waited += 5) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      exited = waitpid(worker.pid, &status, WNOHANG) == worker.pid;
    }
    if (exited) {
      ended = describe_status(status);
    } else {
      // bubblewrap's PID namespace ends with it, and every process the kernel started with it.
      kill(worker.pid, SIGKILL);
      waitpid(worker.pid, &status, 0);
    }
    if (worker.held) worker.held->forget();  // ended while locked: nothing to unlock
    worker.held.reset();
    worker.gpu_bytes = 0;
    worker.pid = -1;
    worker.awaiting_load = false;
    worker.round_trip = {};
    worker.run_inputs_path = {};
    worker.to = worker.from = -1;
    worker.reader.reset();
    return ended;
  }

  // Copies what the worker printed since the last request to stderr, each line marked as the
  // worker's; past kForwardedOutputBytes per request, only how much more it printed.
  void forward_log(WorkerProcess& worker) {
    if (worker.log < 0) return;
    std::string text;
    size_t more = 0;
    char buffer[1 << 14];
    for (ssize_t got; (got = ::read(worker.log, buffer, sizeof(buffer))) > 0;) {
      const size_t kept = std::min(static_cast<size_t>(got), kForwardedOutputBytes - std::min(kForwardedOutputBytes, text.size()));
      text.append(buffer, kept);
      more += static_cast<size_t>(got) - kept;
    }
    std::stringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) std::cerr << "[kernel worker] " << line << "\n";
    }
    if (more > 0) std::cerr << "[kernel worker] ... " << more << " more bytes of output not shown\n";
  }

  static std::string last_output(const WorkerProcess& worker) {
    std::ifstream log(worker.log_path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text.empty() ? "; it printed nothing" : "; its last output: " + text;
  }

  // Whether the manifest and every file it names lie in one of `roots` (their folders too, which
  // may be a root itself: a build's kernel libraries lie in its top folder), and so do the files
  // their links lead to: what a spare that sees only the roots can load. (A kernel view's Python
  // kernel is a link into the kernel folder, which such a spare does not see.)
  bool manifest_under(const std::vector<std::string>& roots) const {
    std::vector<std::string> resolved_roots;
    for (const std::string& root : roots) resolved_roots.push_back(resolved(root));
    const auto within = [](const std::string& path, const std::vector<std::string>& folders) {
      if (path.find("/../") != std::string::npos) return false;
      return std::any_of(folders.begin(), folders.end(), [&](const std::string& root) {
        return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
      });
    };
    const auto under = [&](const std::string& path) { return within(path, roots) && within(resolved(path), resolved_roots); };
    if (!under(manifest_)) return false;
    const std::vector<std::string> paths = manifest_paths();
    return std::all_of(paths.begin(), paths.end(), under);
  }

  // Where `path` leads, links followed; itself where it does not exist.
  static std::string resolved(const std::string& path) {
    char* real = ::realpath(path.c_str(), nullptr);
    if (real == nullptr) return path;
    const std::string found = real;
    std::free(real);
    return found;
  }

  // The files a manifest names (kernel libraries, Python kernels, op library listings).
  std::vector<std::string> manifest_files() const {
    std::vector<std::string> files;
    std::ifstream manifest(manifest_);
    for (std::string line; std::getline(manifest, line);) {
      std::stringstream words(line);
      for (std::string word; words >> word;) {
        if (!word.empty() && word[0] == '/') files.push_back(word);
      }
    }
    return files;
  }

  // Those files and their folders: what a worker of the manifest sees.
  std::vector<std::string> manifest_paths() const {
    std::vector<std::string> paths;
    for (const std::string& file : manifest_files()) {
      paths.push_back(file);
      paths.push_back(file.substr(0, file.find_last_of('/')));
    }
    return paths;
  }

  // What the running workers were started for: the manifest, the size and modification time of
  // every file it names, and the sandbox. A kept worker has loaded those files as they were.
  std::string workers_key() const {
    std::string key = manifest_ + (sandbox_ ? "\nsandboxed" : "\nunsandboxed");
    std::vector<std::string> files = manifest_files();
    files.push_back(manifest_);
    for (const std::string& path : files) {
      struct stat status {};
      if (::stat(path.c_str(), &status) != 0) {
        key += "\n" + path + " missing";
        continue;
      }
      key += "\n" + path + " " + std::to_string(status.st_size) + " " + std::to_string(status.st_mtim.tv_sec) + "." +
             std::to_string(status.st_mtim.tv_nsec);
    }
    return key;
  }

  std::mutex mutex_;
  std::map<Key, WorkerProcess> workers_;
  std::map<bool, WorkerProcess> spares_;  // started before their job (start_spare)
  std::set<std::string> op_libraries_;
  std::string manifest_, root_, bubblewrap_;
  bool sandbox_ = true;
  bool run_inputs_shared_ = false;  // settings.cuda_run_inputs_shared: GPU workers' shared path timed
  bool early_spare_ = false;  // replaces_spare_at_once
  bool keep_between_jobs_ = false;
  std::string workers_key_;  // workers_key() of the running workers
  bool questions_on_gpu_ = false;
  std::optional<Key> gpu_holder_;  // the GPU worker asked last (give_gpu_to)
  int64_t turn_unheld_bytes_ = -1;  // gpu_unheld_bytes() as gpu_holder_'s turn began
  bool said_gpu_busy_ = false;      // give_gpu_to warned of work no worker of this process left
  int64_t timeout_ms_ = -1;
  int started_ = 0;
  uint64_t requests_ = 0;  // requests begun, for WorkerProcess::last_used
};

// A kernel that runs in a worker: every call crosses the process boundary.
class WorkerBackend : public Backend {
 public:
  // `line`: the kernel manifest line whose worker runs it (one kernel per worker).
  WorkerBackend(const json& entry, int line)
      : Backend(entry.at("backend").get<std::string>(), Kind::kKernel),
        line_(line),
        op_(entry.at("operator").get<std::string>()),
        source_(entry.value("source", "")),
        device_rule_(entry.value("device", "cpu")),
        derived_(entry.value("derived", false)),
        from_python_(entry.value("launches_from_python", false)) {}

  c10::Device device(const Settings& settings) const override {
    if (device_rule_ == "cuda") return c10::Device(c10::DeviceType::CUDA, 0);
    if (device_rule_ == "reference") return reference_device(settings);
    return c10::Device(c10::DeviceType::CPU);
  }
  std::string source() const override { return source_; }
  bool is_derived() const override { return derived_; }
  bool launches_from_python() const override { return from_python_; }
  bool runs_in_worker() const override { return true; }
  int line() const { return line_; }

  std::optional<Unusable> unusable() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!unusable_asked_) {
      json header = request_header("unusable");
      header["operator"] = op_;
      header["backend"] = name();
      try {
        const json answer =
            WorkerPool::instance().request({WorkerPool::instance().questions_on_gpu(), line_}, header, {}, nullptr);
        if (answer.value("unusable", false)) {
          // A kernel that cannot run fails; only an op library (named so by the manifest, not by
          // its worker) is skipped where it cannot run: a worker's "skip" cannot hide a kernel.
          const bool skip = answer.value("skip", false) && WorkerPool::instance().is_op_library(name());
          unusable_ = Unusable{skip, answer.value("reason", std::string("its worker gave no reason"))};
        }
      } catch (const std::exception& error) {
        unusable_ = Unusable{false, error.what()};
      }
      unusable_asked_ = true;
    }
    return unusable_;
  }

  Stack call(const c10::OperatorHandle& op, Stack stack, c10::Device device) const override {
    return call_observed(op, std::move(stack), device, nullptr).outputs;
  }

  ObservedCall call_observed(const c10::OperatorHandle& op, Stack stack, c10::Device device,
                             const InputDraw* drawn_from) const override {
    json header = call_request("call", op_, name(), op, device);
    if (!hung_.empty()) throw std::runtime_error("not run again: its kernel worker hung on an earlier case (" + hung_ + ")");
    // The worker makes the inputs itself where it can: then only what the call changed and its
    // outputs cross. Inputs it made otherwise than these only fail its own case (the outputs
    // and the inputs after the call are compared here, with these inputs' reference).
    if (drawn_from != nullptr) header["inputs"] = draw_json(*drawn_from);
    std::vector<char> payload;
    json answer;
    try {
      answer = WorkerPool::instance().request({device.is_cuda(), line_}, header,
                                              drawn_from != nullptr ? std::vector<char>() : worker::save_values(stack), &payload);
    } catch (const WorkerHung& error) {
      hung_ = error.what();  // every later case would wait out the same timeout
      throw;
    }
    return observed_from(answer, payload, stack, device);
  }

  // Every draw in one request, sent before the first draw's `prepare` runs on CUDA: the worker
  // makes and calls the draws back to back while this process prepares and checks each (a
  // check's round trip was 2.0 ms against 0.49 ms in-process, H200). On a CPU the two would share
  // the cores, and a case too costly for the CPU is only known from the inputs `prepare` makes:
  // there the first draw is prepared before the request goes.
  std::unique_ptr<DrawCalls> call_draws(const c10::OperatorHandle& op, c10::Device device,
                                        std::vector<InputDraw> draws) const override {
    return std::make_unique<Draws>(*this, op, device, std::move(draws));
  }

 private:
  class Draws : public DrawCalls {
   public:
    Draws(const WorkerBackend& backend, const c10::OperatorHandle& op, c10::Device device, std::vector<InputDraw> draws)
        : DrawCalls(op, device, std::move(draws)), backend_(backend) {}

    std::optional<ObservedCall> next(const std::function<Stack*()>& prepare) override {
      const size_t draw = take_next();
      if (!backend_.hung_.empty()) {
        if (prepare() == nullptr) return std::nullopt;
        throw std::runtime_error("not run again: its kernel worker hung on an earlier case (" + backend_.hung_ + ")");
      }
      Stack* stack = nullptr;
      bool prepared = false;
      const auto run_prepare = [&] {
        stack = prepare();
        prepared = true;
      };
      if (!device_.is_cuda() && draw == 0) {
        run_prepare();
        if (stack == nullptr) return std::nullopt;
      }
      std::vector<char> payload;
      json answer;
      try {
        if (!answers_) {
          json header = call_request("call", backend_.op_, backend_.name(), op_, device_);
          json recipes = json::array();
          for (const InputDraw& drawn : draws_) recipes.push_back(draw_json(drawn));
          header["draws"] = recipes;
          answers_ = std::make_unique<WorkerPool::Answers>(WorkerPool::instance(), WorkerPool::Key{device_.is_cuda(), backend_.line()},
                                                           header, draws_.size());
        }
        if (!prepared) run_prepare();  // while the worker calls this draw
        // What the answer may carry: the inputs as the call left them and the outputs, a small
        // multiple of what the reference's take (a kernel's outputs may be views of more).
        if (stack != nullptr) answer_limit_ = kAnswerSlackBytes + kAnswerMultiple * (stack_bytes(*stack) + expected_output_bytes_);
        answer = answers_->next(&payload, answer_limit_);
      } catch (const std::exception& error) {
        if (const auto* hung = dynamic_cast<const WorkerHung*>(&error)) backend_.hung_ = hung->what();
        // The worker failed before or during this process's preparation: a case decided there
        // is decided as it would have been without the worker.
        if (!prepared) run_prepare();
        if (stack == nullptr) return std::nullopt;
        throw;
      }
      if (stack == nullptr) return std::nullopt;
      return backend_.observed_from(answer, payload, *stack, device_);
    }

    // The draws after the one that decided the case were called all the same: a worker that
    // hangs on one of them is stopped, and hung as it would be on a draw of its own.
    ~Draws() override {
      if (!answers_) return;
      try {
        answers_->drop_the_rest(answer_limit_);  // the other draws' shapes are this one's
      } catch (const WorkerHung& error) {
        backend_.hung_ = error.what();
      } catch (const std::exception&) {
        // A worker that died after the case was decided: the next case starts another.
      }
    }

   private:
    const WorkerBackend& backend_;
    std::unique_ptr<WorkerPool::Answers> answers_;  // the pool is held while it lives
    uint64_t answer_limit_ = worker::kMaxPayloadBytes;
  };

  // The call's answer, its outputs and the inputs as the call left them written into `stack`'s
  // own tensors.
  ObservedCall observed_from(const json& answer, const std::vector<char>& payload, const Stack& stack,
                             c10::Device device) const {
    if (answer.contains("error") && answer["error"].is_string()) throw std::runtime_error(answer["error"].get<std::string>());
    ObservedCall observed;
    try {
      // Only the GPU worker's answers may name slots, and only its own.
      const std::vector<c10::IValue> values =
          worker::load_values(payload, device.is_cuda() ? &WorkerPool::instance().gpu_imports(line_) : nullptr);
      if (values.size() != 2 || !values[0].isTuple() || !values[1].isTuple()) {
        throw worker::ProtocolError("a call's payload is not (inputs, outputs)");
      }
      const auto& after = values[0].toTupleRef().elements();
      const auto& outputs = values[1].toTupleRef().elements();
      // The inputs as the call left them, written into the supervisor's own tensors.
      const std::vector<at::Tensor> mine = tensors_in(stack);
      // One entry per input tensor: the tensor as the call left it, or none where it is unchanged.
      std::vector<at::Tensor> theirs;
      for (const c10::IValue& entry : after) {
        if (!entry.isTensor() && !entry.isNone()) throw worker::ProtocolError("a call's input came back as something else");
        theirs.push_back(entry.isTensor() ? entry.toTensor() : at::Tensor());
      }
      if (mine.size() != theirs.size()) throw worker::ProtocolError("a call's inputs came back with another count");
      at::NoGradGuard no_grad;
      for (size_t i = 0; i < mine.size(); ++i) {
        if (!mine[i].defined() || !theirs[i].defined()) continue;
        if (mine[i].scalar_type() != theirs[i].scalar_type() || mine[i].device() != theirs[i].device() ||
            mine[i].layout() != at::kStrided || theirs[i].layout() != at::kStrided) {
          throw worker::ProtocolError("a call's input " + std::to_string(i) + " came back with another dtype, device or layout");
        }
        at::Tensor target = mine[i];
        target.set_(theirs[i]);
      }
      observed.outputs.assign(outputs.begin(), outputs.end());
      const json same = answer.value("output_is_input", json::array());
      for (size_t i = 0; i < observed.outputs.size() && i < same.size(); ++i) {
        const int64_t index = same[i].is_number_integer() ? same[i].get<int64_t>() : -1;
        if (index >= 0 && static_cast<size_t>(index) < mine.size()) observed.outputs[i] = mine[index];
      }
    } catch (const worker::ProtocolError& error) {
      throw std::runtime_error(std::string("the kernel worker's answer is malformed: ") + error.what());
    }
    const json inside = answer.value("inside", json::object());
    observed.inside.dispatched = inside.value("dispatched", std::vector<std::string>());
    observed.inside.dispatched_elsewhere = inside.value("dispatched_elsewhere", std::vector<std::string>());
    observed.inside.state_changes = inside.value("state_changes", std::vector<std::string>());
    observed.inside.threads_left = inside.value("threads_left", std::vector<int>());
    observed.inside.late_device_writes = inside.value("late_device_writes", "");
    observed.inside.aten_computing = inside.value("aten_computing", std::vector<std::string>());
    const double share = inside.value("aten_share", -1.0);
    observed.inside.aten_share = share >= 0 && share <= 1 ? share : -1;  // the kernel's process says so: shown, never trusted
    return observed;
  }

  int line_;
  std::string op_, source_, device_rule_;
  bool derived_, from_python_;
  mutable std::mutex mutex_;
  mutable bool unusable_asked_ = false;
  mutable std::optional<Unusable> unusable_;
  mutable std::string hung_;
};

// The manifest line of a kernel that runs in a worker (its worker's), -1 for any other backend.
static int worker_line(const Backend& backend) {
  const auto* in_worker = dynamic_cast<const WorkerBackend*>(&backend);
  return in_worker != nullptr ? in_worker->line() : -1;
}


}  // namespace

WorkerPoolRequests::Key WorkerPoolRequests::key_of(const Backend& backend, c10::Device device) {
  return {device.is_cuda(), worker_line(backend)};
}
json WorkerPoolRequests::request(Key key, const json& header, const std::vector<char>& payload,
                                 std::vector<char>* response_payload, uint64_t max_payload_bytes,
                                 const std::vector<int>& descriptors) {
  return WorkerPool::instance().request(key, header, payload, response_payload, max_payload_bytes, descriptors);
}
const device_share::Imports& WorkerPoolRequests::gpu_imports(int line) { return WorkerPool::instance().gpu_imports(line); }
pid_t WorkerPoolRequests::worker_pid(Key key) { return WorkerPool::instance().worker_pid(key); }
WorkerPoolRequests::RoundTrip WorkerPoolRequests::round_trip(Key key) { return WorkerPool::instance().round_trip(key); }
WorkerPoolRequests::RoundTrip WorkerPoolRequests::run_inputs_path(Key key) {
  return WorkerPool::instance().run_inputs_path(key);
}

bool gpu_busy_now() {
  try {
    const c10::Device device(c10::DeviceType::CUDA, 0);
    at::Tensor one = at::empty({1}, at::TensorOptions().dtype(at::kFloat).device(device));
    synchronize_all_devices();
    double least = std::numeric_limits<double>::infinity();
    for (int probe = 0; probe < kGpuIdleProbes; ++probe) {
      const auto started = std::chrono::steady_clock::now();
      one.fill_(probe);
      synchronize_all_devices();
      least = std::min(least, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    return least > kGpuIdleSeconds;
  } catch (const std::exception&) {
    return false;  // no GPU to ask
  }
}

bool gpu_idle_within(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (gpu_busy_now()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

size_t make_gpu_room(size_t others, const std::function<std::pair<uint64_t, uint64_t>()>& free_and_total,
                     const std::function<void(size_t)>& end) {
  size_t ended = 0;
  for (; ended < others; ++ended) {
    const auto [free, total] = free_and_total();
    if (free * kGpuRoomShare >= total) break;
    end(ended);
  }
  return ended;
}

RunInputsHandOver hand_over_run_inputs(pid_t worker, const std::function<void()>& write) {
  RunInputsHandOver handed;
  device_share::ProcessLocks locks(processes::tree_of(worker), kRunInputsLockMilliseconds);
  if (!locks.locked()) {
    handed.refused = locks.error();
    handed.work_left = locks.work_left();
    return handed;
  }
  std::optional<processes::Stopped> stopped(std::vector<pid_t>{worker});
  if (!stopped->whole()) {
    handed.refused = "its processes could not all be stopped (one forking without end, or held by a debugger)";
    return handed;
  }
  // The lock holds the worker's CUDA calls, not a kernel of its already on the GPU (one left
  // watching for the values), which the GPU would give time slices while they are written.
  if (gpu_busy_now()) {
    handed.refused = "the GPU was busy with work not of this process's (a kernel the worker left running there?)";
    handed.work_left = true;
    handed.holders = gpu_holders_now(worker);
    return handed;
  }
  write();
  handed.clock_started = std::chrono::steady_clock::now();
  stopped.reset();  // the worker's processes go on once the clock runs
  locks.unlock();   // running again: the driver's thread in each answers
  return handed;
}
std::vector<pid_t> WorkerPoolRequests::worker_pids_but(std::optional<Key> except) {
  return WorkerPool::instance().worker_pids_but(except);
}

static std::vector<int> worker_lines_for(const std::string& manifest, const std::vector<Job>& jobs) {
  const size_t count = kernel_manifest_lines(manifest).size();
  std::set<int> lines;
  for (const Job& job : jobs) {
    const int line = kernel_manifest_line(manifest, job.op, job.backend);
    if (line >= 0) lines.insert(line);
  }
  // No job, or none that names a kernel of the manifest (a run of every kernel; a job of an
  // unknown one fails as before): every line.
  if (lines.empty()) {
    for (size_t i = 0; i < count; ++i) lines.insert(static_cast<int>(i));
  }
  return {lines.begin(), lines.end()};
}

void start_kernel_workers(const std::string& manifest, const Settings& settings) {
  WorkerPool& pool = WorkerPool::instance();
  pool.configure(manifest, settings);
  pool.set_questions_on_gpu(reference_device(settings).is_cuda());
  // While the workers start (libtorch, the kernel library: about 0.4 s), this process starts
  // CUDA (0.2 s of an entry's 2 on an H100) instead of on its first case.
  std::thread cuda_start;
  if (pool.questions_on_gpu()) {
    cuda_start = std::thread([device = reference_device(settings)] { start_cuda_on(device); });
  }
  // One worker for each manifest line the jobs need, each asked for the kernels of its line. Where
  // several are needed, one that fails (a kernel that crashes at load) leaves out its own line's
  // kernels only, said here: their cases get no verdict, and a case without one fails.
  if (!std::ifstream(manifest)) {
    if (cuda_start.joinable()) cuda_start.join();
    throw std::runtime_error("cannot read the kernel manifest " + manifest);
  }
  const std::vector<int> lines = worker_lines_for(manifest, settings.jobs);
  const std::vector<std::string> texts = kernel_manifest_lines(manifest);
  std::vector<std::pair<int, json>> listings;
  for (const int line : lines) {
    try {
      json answer = pool.request({pool.questions_on_gpu(), line}, request_header("list"), {}, nullptr);
      if (answer.contains("error") && answer["error"].is_string()) throw std::runtime_error(answer["error"].get<std::string>());
      listings.emplace_back(line, std::move(answer));
    } catch (const std::exception& error) {
      if (lines.size() == 1) {
        if (cuda_start.joinable()) cuda_start.join();
        throw;
      }
      std::cerr << "backendbench: the kernel worker of " << texts.at(static_cast<size_t>(line)) << " failed; its kernels are left out: "
                << error.what() << "\n";
    }
  }
  if (cuda_start.joinable()) cuda_start.join();
  // Which lines list each kernel: a kernel two workers list is registered for neither.
  std::map<std::pair<std::string, std::string>, std::set<int>> listed_by;
  for (const auto& [line, answer] : listings) {
    for (const json& entry : answer.value("kernels", json::array())) {
      if (entry.is_object() && entry.value("operator", json()).is_string() && entry.value("backend", json()).is_string()) {
        listed_by[{entry["operator"].get<std::string>(), entry["backend"].get<std::string>()}].insert(line);
      }
    }
  }
  for (const auto& [line, answer] : listings) {
    for (const json& entry : answer.value("kernels", json::array())) {
      // The listing is the worker's word: each name must be a kernel's (impl<N>) or an op
      // library's the manifest names, never the reference's or an instrument's, and a kernel
      // of the worker's own line (by the manifest's text, kernel_manifest_line).
      const std::string name = entry.is_object() ? entry.value("backend", "") : "";
      const bool kernel_name = name.size() > 4 && name.rfind("impl", 0) == 0 &&
                               name.find_first_not_of("0123456789", 4) == std::string::npos;
      const std::string device = entry.is_object() ? entry.value("device", "") : "";
      if (!(kernel_name || pool.is_op_library(name)) || (device != "cpu" && device != "cuda" && device != "reference")) {
        throw std::runtime_error("the kernel worker listed a kernel named '" + name + "' on device '" + device +
                                 "'; expected impl<N> or an op library of the manifest, on cpu, cuda or reference");
      }
      try {
        const std::string op = entry.at("operator").get<std::string>();
        // Only its own line's kernels: where the manifest's text names the kernel's line (the
        // build's file names), that line's; where it does not (a manifest of other names), a
        // kernel no other worker lists too. No worker can stand in for another's kernel.
        const int named = kernel_manifest_line(manifest, op, name);
        const size_t listers = listed_by[{op, name}].size();
        if ((named >= 0 && named != line) || (named < 0 && listers > 1)) {
          std::cerr << "backendbench: the kernel worker of manifest line " << line + 1 << " listed " << name << " of " << op
                    << (named >= 0 ? ", which that line does not hold" : ", which another line's worker lists too")
                    << "; left out\n";
          continue;
        }
        auto backend = std::make_unique<WorkerBackend>(entry, line);
        // Its file as the manifest names it (kernel_imports.h), not as the worker's listing says.
        set_kernel_file(*backend, kernel_file(manifest, op, name));
        backends().add(op, std::move(backend));
      } catch (const json::exception& error) {
        throw std::runtime_error(std::string("the kernel worker listed a malformed kernel: ") + error.what());
      }
    }
  }
}

void stop_kernel_workers() {
  WorkerPool::instance().stop_all();
  backends().remove_worker_backends();
  forget_kernel_files();
}

void keep_kernel_workers_between_jobs() { WorkerPool::instance().keep_between_jobs(); }

bool forget_kernels_keep_workers() {
  backends().remove_worker_backends();
  forget_kernel_files();
  return WorkerPool::instance().has_running_worker();
}

void start_spare_worker(const std::vector<std::string>& kernel_roots, const Settings& settings, bool python) {
  WorkerPool& pool = WorkerPool::instance();
  pool.configure_process(settings);
  pool.start_spare(reference_device(settings).is_cuda(), kernel_roots, python);
}


}  // namespace backendbench
