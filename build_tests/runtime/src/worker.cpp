// Kernel workers, both sides; see worker.h.
#include "backendbench/worker.h"

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
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "backendbench/backend.h"
#include "backendbench/build_paths.h"
#include "backendbench/check.h"
#include "backendbench/device_share.h"
#include "backendbench/files.h"
#include "backendbench/inputs.h"
#include "backendbench/observe.h"
#include "backendbench/operator_facts.h"
#include "backendbench/processes.h"
#include "backendbench/roofline.h"
#include "backendbench/run_start.h"
#include "backendbench/sandbox.h"
#include "backendbench/tensor_values.h"
#include "backendbench/kernel_imports.h"
#include "backendbench/timing.h"
#include "backendbench/worker_protocol.h"

namespace backendbench {
namespace {

using nlohmann::json;

json request_header(const std::string& kind) {
  return {{"schema", worker::kRequestSchema}, {"version", worker::kProtocolVersion}, {"kind", kind}};
}

json response_header() { return {{"schema", worker::kResponseSchema}, {"version", worker::kProtocolVersion}}; }

// A request about one call of one backend on one operator: call and time share it.
json call_request(const std::string& kind, const std::string& op_display, const std::string& backend,
                  const c10::OperatorHandle& handle, c10::Device device) {
  json header = request_header(kind);
  header["operator"] = op_display;
  header["backend"] = backend;
  header["schema_name"] = handle.schema().name();
  header["overload"] = handle.schema().overload_name();
  header["device"] = device.str();
  return header;
}

// How a stack of inputs was made (InputDraw), for a worker to make the same values.
json draw_json(const InputDraw& drawn) {
  json made = {{"arguments", drawn.spec->arguments},
               {"file", drawn.spec->file},
               {"line", drawn.spec->line},
               {"seed", drawn.spec->seed},
               {"draw", drawn.draw},
               {"salt", drawn.salt}};
  if (drawn.timed_next) made["timed_next"] = true;
  return made;
}

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
  int device_socket = -1;  // a GPU worker's: device copies' descriptors come here (device_share.h)
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
  uint64_t last_used = 0;  // the pool's request count when it last served one
};

// Workers kept running at once: a supervisor serving a folder of hundreds of kernels one job
// after another keeps a worker for each (one kernel per worker), so the least recently used is
// stopped before another starts past this many (each holds libtorch, and CUDA on a GPU).
constexpr size_t kMaxRunningWorkers = 8;

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
  json request(Key key, const json& header, const std::vector<char>& payload, std::vector<char>* response_payload,
               uint64_t max_payload_bytes = worker::kMaxPayloadBytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    WorkerProcess& worker = started_worker(key);
    return failing_worker(worker, [&] {
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

  // Runs `exchange` on `worker` (a spare's `load` first where it still waits for it). A worker
  // that fails (a protocol error, no answer within the case timeout) is stopped, and a
  // std::runtime_error (WorkerHung for a timeout) says why, with its last output. Under mutex_.
  json failing_worker(WorkerProcess& worker, const std::function<json()>& exchange) {
    std::string failure;
    bool hung = false;
    try {
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
    worker::write_message(worker.to, {header.dump(), payload});
  }

  json receive(WorkerProcess& worker, std::vector<char>* response_payload, uint64_t max_payload_bytes) {
    std::optional<worker::Message> answer = worker.reader->read(timeout_ms_, max_payload_bytes);
    forward_log(worker);
    if (!answer) throw worker::ProtocolError("it closed its pipe without an answer");
    json parsed = json::parse(answer->header, nullptr, /*allow_exceptions=*/false);
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
        (announced.get<int64_t>() > 0 && worker.device_socket < 0) || !new_slots.is_array() || !retired.is_array() ||
        new_slots.size() != announced.get<size_t>()) {
      throw worker::ProtocolError("it announced descriptors it cannot send");
    }
    device_share::Descriptors received;
    try {
      received = device_share::Descriptors(
          device_share::receive_descriptors(worker.device_socket, announced.get<size_t>(), /*timeout_ms=*/5000));
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
    // A GPU worker hands large outputs over as device copies: their descriptors need a socket.
    int sockets[2] = {-1, -1};
    if (gpu) {
      if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sockets) != 0) {
        throw std::runtime_error(std::string("cannot make the kernel worker's socket: ") + std::strerror(errno));
      }
      command.insert(command.end(), {"--device-socket", "3"});
    }
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
    worker.device_socket = sockets[0];
  }

  // Stops `worker`; says how it ended ("" when it was still running and was killed).
  // Ends the worker: waits up to `grace_ms` for it to end by itself (its status is then told),
  // then kills it.
  std::string stop(WorkerProcess& worker, int grace_ms = 0) {
    if (worker.pid < 0) return "";
    ::close(worker.to);
    ::close(worker.from);
    if (worker.device_socket >= 0) ::close(worker.device_socket);
    worker.device_socket = -1;
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
    worker.pid = -1;
    worker.awaiting_load = false;
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
  bool early_spare_ = false;  // replaces_spare_at_once
  bool keep_between_jobs_ = false;
  std::string workers_key_;  // workers_key() of the running workers
  bool questions_on_gpu_ = false;
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
  return drawn.dump() + " " + op.schema().name() + "." + op.schema().overload_name() + " " + device.str();
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

json timing_settings(const Settings& settings) {
  return {{"min_samples", settings.stopping.min_samples},
          {"max_samples", settings.stopping.max_samples},
          {"target_relative_error", settings.stopping.target_relative_error},
          {"seconds_cap", settings.stopping.seconds_cap},
          {"flush", settings.layout.flush == SamplingLayout::Flush::kWrite ? "write" : "read"},
          {"flush_bytes", settings.layout.flush_bytes},
          {"batch_pairs", settings.layout.batch_pairs}};
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

// The calls a `prepare_run` made ready for the `run` that follows: one stack of inputs each (the
// value sets in turn; fresh copies for an operator that writes its inputs), made before the
// supervisor's clock starts.
struct PreparedRun {
  BoundCall call;
  c10::Device device;
  std::vector<std::vector<c10::IValue>> inputs;
  size_t value_sets = 1;
};

std::optional<PreparedRun>& prepared_run() {
  static auto* prepared = new std::optional<PreparedRun>;  // never destroyed: CUDA unloads before statics
  return *prepared;
}

// The last run's outputs, until `run_output` hands them over.
std::vector<c10::IValue>& last_run_outputs() {
  static auto* outputs = new std::vector<c10::IValue>;
  return *outputs;
}

json answer_prepare_run(const json& header, const std::vector<char>& payload) {
  const auto [backend, op, device] = call_target(header);
  std::vector<std::vector<c10::IValue>> value_sets = value_sets_of(header, payload, op, device, /*take_kept=*/false);
  const json calls = header.value("calls", json());
  if (value_sets.empty() || !calls.is_number_unsigned() || calls.get<int64_t>() < 1 || calls.get<int64_t>() > kMostBackToBackCalls) {
    throw std::runtime_error("a 'prepare_run' without value sets, or without a count of calls from 1 to " +
                             std::to_string(kMostBackToBackCalls));
  }
  const bool writes_inputs =
      !written_arguments(op.schema(), facts_of(header.value("operator", "")).unannotated_writes).empty();
  prepared_run().reset();
  last_run_outputs().clear();
  PreparedRun prepared{backend.bind(op, value_sets[0], device), device, {}, value_sets.size()};
  for (int64_t i = 0; i < calls.get<int64_t>(); ++i) {
    const std::vector<c10::IValue>& set = value_sets[static_cast<size_t>(i) % value_sets.size()];
    prepared.inputs.push_back(writes_inputs ? clone_inputs(set) : set);
  }
  synchronize_all_devices();  // the copies are made before the clock starts
  prepared_run() = std::move(prepared);
  return response_header();
}

// The prepared calls back to back, then every device synchronised and a digest of the last
// outputs: the supervisor's clock runs from the request to this answer, and the digest (which
// the outputs it fetches next must match) cannot be written before the outputs are.
json answer_run(bool& fatal) {
  if (!prepared_run()) throw std::runtime_error("a 'run' without a 'prepare_run' before it");
  PreparedRun prepared = std::move(*prepared_run());
  prepared_run().reset();
  json answer = response_header();
  std::vector<c10::IValue> last;
  try {
    // Each call's outputs go before the next call, as in the paired samples (and the
    // supervisor's reference run), so that each call finds the allocator as they do.
    for (std::vector<c10::IValue>& inputs : prepared.inputs) {
      last.clear();
      last = prepared.call(std::move(inputs));
    }
    synchronize_all_devices();
    answer["digests"] = worker::output_digests(last);
  } catch (const std::exception& error) {
    answer["error"] = error.what();
    fatal = prepared.device.is_cuda() && std::string(error.what()).find("CUDA") != std::string::npos;
    return answer;
  }
  answer["value_set"] = (prepared.inputs.size() - 1) % prepared.value_sets;
  last_run_outputs() = std::move(last);
  return answer;
}

json answer_run_output(std::vector<char>& out, device_share::Exports* exports) {
  out = worker::save_values({c10::ivalue::Tuple::create(std::move(last_run_outputs()))}, exports);
  last_run_outputs().clear();
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

// Starts CUDA on `device` now rather than on the first case; a failure is left for that case.
void start_cuda_on(c10::Device device) {
  try {
    (void)at::zeros({1}, at::TensorOptions().device(device)).sum().item<float>();
  } catch (const std::exception&) {
  }
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

// Seconds of one run of `calls` calls of the reference back to back in this process, on the
// value sets in turn (fresh copies, made first, for an operator that writes its inputs), every
// device synchronised before and after: the reference's side of the speedup both sides get back
// to back (bound_by_back_to_back runs it in turns with the kernel's and keeps the fastest).
double reference_back_to_back(const c10::OperatorHandle& handle, c10::Device device, SupervisorValues& values,
                              int64_t calls, bool writes_inputs, pid_t timed_worker) {
  const BoundCall reference = backends().reference().bind(handle, values.inputs(0), device);
  const processes::Stopped quiet({timed_worker});  // as supervisor_reference
  std::vector<std::vector<c10::IValue>> stacks;
  for (int64_t i = 0; i < calls; ++i) {
    const std::vector<c10::IValue>& set = values.inputs(static_cast<size_t>(i) % values.count());
    stacks.push_back(writes_inputs ? clone_inputs(set) : set);
  }
  std::vector<c10::IValue> last;
  synchronize_all_devices();
  const auto started = std::chrono::steady_clock::now();
  for (std::vector<c10::IValue>& stack : stacks) {
    last.clear();  // as the kernel's run (answer_run)
    last = reference(std::move(stack));
  }
  synchronize_all_devices();
  (void)worker::output_digests(last);  // as the kernel's run answers with its digest
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

// The speedup bounded on both sides by this process's clock (worker.h, kBackToBackSeconds):
// adds its error, or counts the back-to-back figures, in `measured`.
void bound_by_back_to_back(Measurement& measured, const std::string& op_display, const c10::OperatorHandle& handle,
                           const Backend& backend, c10::Device device, SupervisorValues& values,
                           const std::vector<std::vector<c10::IValue>>& value_sets, const std::vector<InputDraw>& drawn_from,
                           const std::string& where) {
  TimingFigures& f = measured.figures;
  const double claimed = f.kernel_us / 1e6;
  // On CUDA only a case whose calls last kBoundedCallSeconds or more, by the kernel's claim or the
  // reference's (bounded above by this process): shorter calls back to back are bound by their
  // launches, not by their work (on the H200, 101 of the 874 timed cases of the 914-case subset,
  // honest kernels of several launches, read 0.55x their paired speedup back to back).
  if (device.is_cuda() && std::max(claimed, f.reference_us / 1e6) < kBoundedCallSeconds) return;
  const bool writes_inputs = !written_arguments(handle.schema(), facts_of(op_display).unannotated_writes).empty();
  const int64_t calls = back_to_back_calls(claimed, writes_inputs ? stack_bytes(values.inputs(0)) : 0);
  const std::string label = backend.name() + " (" + backend.source() + ")";
  WorkerPool& pool = WorkerPool::instance();
  const WorkerPool::Key key{device.is_cuda(), worker_line(backend)};
  json prepare = call_request("prepare_run", op_display, backend.name(), handle, device);
  prepare["calls"] = calls;
  const std::vector<char> sets_payload = put_value_sets(prepare, value_sets, drawn_from);
  const auto fail_on = [](const json& answer) {
    if (answer.contains("error") && answer["error"].is_string()) throw std::runtime_error(answer["error"].get<std::string>());
  };
  double fastest = std::numeric_limits<double>::infinity(), fastest_reference = fastest;
  // On CUDA, calls back to back within the kernel's claim end the bound (worker.h).
  const double allowed = device.is_cuda() ? back_to_back_allowance(claimed, calls) : 0.0;
  const auto within_claim = [&] { return device.is_cuda() && fastest <= allowed; };
  const auto verdict = [&] {
    return judge_back_to_back(f.speedup, fastest_reference / fastest, std::max(fastest, fastest_reference) / static_cast<double>(calls),
                              device.is_cuda());
  };
  for (int attempt = 0; attempt < kBackToBackTries && !within_claim() && (attempt == 0 || verdict() != BackToBack::kAgrees);
       ++attempt) {
    fail_on(pool.request(key, prepare, sets_payload, nullptr));
    const auto started = std::chrono::steady_clock::now();
    const json ran = pool.request(key, request_header("run"), {}, nullptr);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    fail_on(ran);
    // The last call ran on the value set the order of calls gives; the worker must say the same.
    const size_t set = static_cast<size_t>(calls - 1) % values.count();
    if (ran.value("value_set", json()) != json(set) || !ran.contains("digests")) {
      throw std::runtime_error("the kernel worker's answer to 'run' is malformed: no digests, or not the last call's value set");
    }
    const std::vector<int64_t> digests = ran.at("digests").get<std::vector<int64_t>>();
    std::vector<char> payload;
    const uint64_t expected_bytes = stack_bytes(values.reference(set));
    fail_on(pool.request(key, request_header("run_output"), {}, &payload, kAnswerSlackBytes + kAnswerMultiple * expected_bytes));
    const std::vector<c10::IValue> outputs = worker::load_values(payload, device.is_cuda() ? &pool.gpu_imports(key.second) : nullptr);
    if (outputs.size() != 1 || !outputs[0].isTuple()) throw std::runtime_error("the kernel worker's run outputs are malformed");
    const auto& elements = outputs[0].toTupleRef().elements();
    const std::vector<c10::IValue> got(elements.begin(), elements.end());
    if (worker::output_digests(got) != digests) {
      measured.flags.push_back("timing_disagrees");
      measured.errors.push_back(label + " on " + where + ": called back to back, its worker answered before its outputs were " +
                                "what it then sent (their digests differ): the work was not done when the supervisor's clock stopped");
      return;
    }
    const Comparison comparison = values.compare(set, got);
    if (!comparison.equal) {
      measured.flags.push_back("wrong_when_timed");
      measured.errors.push_back(label + " on " + where + ": right when checked but wrong when called back to back: " +
                                comparison.message + " (judged by the supervisor)");
      return;
    }
    fastest = std::min(fastest, seconds);
    if (within_claim()) break;
    // The reference's run right after the kernel's, in turns: a busy machine slows both alike
    // (timed apart, on the 2-core machine under the full suite, an honest relu read 0.98x paired
    // and 0.40x back to back, its reference's runs in a quiet moment and its own in a busy one).
    fastest_reference = std::min(fastest_reference, reference_back_to_back(handle, device, values, calls, writes_inputs, pool.worker_pid(key)));
  }
  if (within_claim()) return;
  const double per_call = fastest / static_cast<double>(calls), reference_per_call = fastest_reference / static_cast<double>(calls);
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
      scale_speedup(f, back_to_back_speedup / f.speedup);
      measured.flags.push_back("back_to_back_time");
      measured.flags.erase(std::remove(measured.flags.begin(), measured.flags.end(), "speedup_review"), measured.flags.end());
      if (f.speedup > kSpeedupReviewThreshold) measured.flags.push_back("speedup_review");
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
  WorkerPool& pool = WorkerPool::instance();
  const WorkerPool::Key key{device.is_cuda(), worker_line(backend)};
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
  const auto bound_below = [&] {
    if (!measured.errors.empty()) return;
    const auto bound_started = std::chrono::steady_clock::now();
    bound_by_back_to_back(measured, op_display, handle, backend, device, values, value_sets, drawn_from, where);
    measured.bound_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - bound_started).count();
  };
  // The reference as the worker timed it runs in the kernel's process, where a kernel can slow
  // it (a slower aten kernel registered at load, say) to inflate its own speedup. This process
  // times the reference itself (supervisor_reference); the worker's may not be more than
  // kReferenceAgreement times slower (plus kReferenceSlackUs of noise on tiny calls).
  const double agreement = device.is_cuda() ? kReferenceAgreement : kCpuReferenceAgreement;
  if (measured.errors.empty() && checked_outputs != nullptr) {
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
      measured.reference_outputs = std::move(own.outputs);
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
    }
  }
  bound_below();
  return measured;
}

}  // namespace

int64_t back_to_back_calls(double claimed_seconds, uint64_t written_bytes) {
  double calls = claimed_seconds > 0 ? std::ceil(kBackToBackSeconds / claimed_seconds) : static_cast<double>(kMostBackToBackCalls);
  calls = std::clamp(calls, static_cast<double>(kLeastBackToBackCalls), static_cast<double>(kMostBackToBackCalls));
  if (written_bytes > 0) calls = std::min(calls, std::max(2.0, std::floor(static_cast<double>(kBackToBackCopyBytes) / written_bytes)));
  return static_cast<int64_t>(calls);
}

double back_to_back_allowance(double claimed_seconds, int64_t calls) {
  const double launch_slack = kLaunchSlackSeconds * std::max(0.0, 1.0 - claimed_seconds / kBoundedCallSeconds);
  return (1 + kBackToBackTolerance) * static_cast<double>(calls + 1) * claimed_seconds + kBackToBackSlackSeconds +
         static_cast<double>(calls) * launch_slack;
}

BackToBack judge_back_to_back(double paired_speedup, double back_to_back_speedup, double call_seconds, bool cuda) {
  const double tolerance = cuda ? kBackToBackTolerance
                           : call_seconds >= kBoundedCallSeconds ? kCpuBackToBackTolerance
                                                                 : kCpuShortCallBackToBackTolerance;
  if (paired_speedup <= (1 + tolerance) * back_to_back_speedup) return BackToBack::kAgrees;
  const double fail_ratio = cuda ? kBackToBackFailRatio : kCpuBackToBackFailRatio;
  return paired_speedup > fail_ratio * back_to_back_speedup ? BackToBack::kDisagrees : BackToBack::kCounted;
}

bool reference_figure_needs_timing(double worker_reference_us, double agreement, double honest_floor_us) {
  return !(worker_reference_us <= agreement * honest_floor_us + kReferenceSlackUs);
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
  const auto disagrees = [](const Measurement& m) {
    return std::find(m.flags.begin(), m.flags.end(), "timing_disagrees") != m.flags.end();
  };
  double fastest_reference_us = std::numeric_limits<double>::infinity();
  // Every other worker of this process stopped while this kernel is timed, in every attempt
  // (processes.h): no kernel's load-time threads take a core from another's timing.
  WorkerPool& pool = WorkerPool::instance();
  const WorkerPool::Key key{device.is_cuda(), worker_line(backend)};
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
        // Its library as the manifest names it (kernel_imports.h), not as the worker's listing says.
        set_kernel_library(*backend, kernel_library(manifest, op, name));
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
  forget_kernel_libraries();
}

void keep_kernel_workers_between_jobs() { WorkerPool::instance().keep_between_jobs(); }

bool forget_kernels_keep_workers() {
  backends().remove_worker_backends();
  forget_kernel_libraries();
  return WorkerPool::instance().has_running_worker();
}

bool replaces_spare_at_once(std::optional<bool> setting, int usable_cores) {
  constexpr int kCoresForEarlySpares = 8;
  return setting.value_or(usable_cores >= kCoresForEarlySpares);
}

bool replaces_spare_at_once_here(const Settings& settings) {
  cpu_set_t usable;
  const int cores = sched_getaffinity(0, sizeof(usable), &usable) == 0 ? CPU_COUNT(&usable)
                                                                      : static_cast<int>(std::thread::hardware_concurrency());
  return replaces_spare_at_once(settings.early_spare, cores);
}

void start_spare_worker(const std::vector<std::string>& kernel_roots, const Settings& settings, bool python) {
  WorkerPool& pool = WorkerPool::instance();
  pool.configure_process(settings);
  pool.start_spare(reference_device(settings).is_cuda(), kernel_roots, python);
}

namespace {

// The threads libtorch starts on first use of large work (the intra-op pool, OpenMP's) are
// started before any kernel runs: they are not threads a kernel left behind.
void start_libtorch_threads() {
  at::Tensor warm = at::rand({int64_t{1} << 22});
  warm = at::maximum(warm.relu(), at::zeros({}, warm.options())) + warm;
  (void)warm.sum().item<float>();
}

}  // namespace

int serve_kernel_worker(int in_fd, int out_fd, std::string load_error, int device_socket, bool awaiting_manifest,
                        bool start_python) {
  // A GPU worker's shared slots (device_share.h), kept for the process's life.
  static auto* exports = device_socket >= 0 ? new device_share::Exports : nullptr;
  // libtorch's threads, and a GPU worker's CUDA, start once before any kernel runs: right after
  // the listing (what the supervisor waits for at start-up) or, in a worker started again after
  // a crash, which is not asked to list, before its first request.
  bool ready = false;
  const auto get_ready = [&] {
    if (ready) return;
    ready = true;
    start_libtorch_threads();
    if (device_socket >= 0) start_cuda_on(c10::Device(c10::DeviceType::CUDA, 0));
  };
  // A spare worker (started before its job) starts libtorch and CUDA while it waits: no kernel
  // code is loaded yet, so nothing of a kernel's can run among them.
  if (awaiting_manifest) get_ready();
  if (awaiting_manifest && start_python) {
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
          device_share::send_descriptors(device_socket, changes.descriptors);
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
    worker::write_message(out_fd, {answer.dump(-1, ' ', false, json::error_handler_t::replace), payload});
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
    const json header = json::parse(request->header, nullptr, /*allow_exceptions=*/false);
    json answer = response_header();
    std::vector<char> payload;
    bool fatal = false;
    bool listed = false;
    try {
      if (!header.is_object() || header.value("schema", "") != worker::kRequestSchema ||
          header.value("version", 0) != worker::kProtocolVersion) {
        throw std::runtime_error("not a version " + std::to_string(worker::kProtocolVersion) + " worker request");
      }
      const std::string kind = header.value("kind", "");
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
        answer = answer_prepare_run(header, request->payload);
      } else if (kind == "run") {
        answer = answer_run(fatal);
      } else if (kind == "run_output") {
        answer = answer_run_output(payload, exports);
      } else {
        throw std::runtime_error("unknown request kind '" + kind + "'");
      }
    } catch (const std::exception& error) {
      answer = response_header();
      answer["error"] = error.what();
    }
    if (!answer.is_null()) send_answer(answer, payload);
    if (fatal) return 3;
    // Once the supervisor has the listing, while it prepares its first case (0.1 s of libtorch's
    // threads on the 2-core machine, 0.2 s of CUDA on an H100).
    if (listed) get_ready();
  }
}

}  // namespace backendbench
