// A supervisor serving check jobs; see job_service.h.
#include "supervisor/job_service.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/python_bridge.h"
#include "language/json_text.h"
#include "supervisor/run_job.h"
#include "backendbench/verdict.h"
#include "supervisor/kernel_workers.h"

namespace backendbench {
namespace {

using nlohmann::json;

std::string string_field(const json& request, const char* name) {
  const auto it = request.find(name);
  if (it == request.end() || !it->is_string() || it->get<std::string>().empty()) {
    throw std::runtime_error(std::string("the request's '") + name + "' is missing or not a non-empty string");
  }
  return it->get<std::string>();
}

// What a request's cases came to, counted here from the verdicts this process wrote.
struct RequestCounts {
  size_t written = 0, passed = 0, failed = 0, skipped = 0;
  int64_t cases_ms = 0;  // the cases' own time, from the first to the last
};

// When the running case of a served entry's request started (ms of the steady clock), -1
// between cases: the served executable's watch for a reference that hangs (serve_entries).
std::atomic<int64_t> g_case_started_ms{-1};
// How long a case of the running request may take before the process ends: twice its case
// timeout and 10 s, the tests' own watch (0: no limit, a case timeout of 0).
std::atomic<int64_t> g_case_limit_ms{0};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One line per case on standard error (the request's log), in GoogleTest's words: what a CTest
// entry served here prints as its output.
void print_case(const Verdict& verdict) {
  const std::string name = verdict.suite + "/" + verdict.op + "." + verdict.backend + "." + verdict.case_name;
  if (verdict.status == Verdict::Status::kPassed) {
    std::cerr << "[       OK ] " << name << "\n";
  } else if (verdict.status == Verdict::Status::kSkipped) {
    std::cerr << "[  SKIPPED ] " << name << ": " << verdict.skip_reason << "\n";
  } else {
    for (const std::string& error : verdict.errors) std::cerr << error << "\n";
    std::cerr << "[  FAILED  ] " << name << "\n";
  }
}

// Runs one request's jobs; returns what its verdicts came to. Throws when the jobs cannot run
// at all (a bad request, a manifest that does not load): the response's error.
// `default_manifest`: the kernels of a request that names none ("": it must name one).
// `print_cases`: one line per case on standard error (served entries, whose log is their output).
// `mode`: the jobs this executable serves.
RequestCounts run_request(const json& request, const Settings& process_settings, const std::string& default_manifest,
                          bool print_cases, Job::Mode mode) {
  if (!request.is_object() || request.value("schema", "") != kJobRequestSchema ||
      request.value("version", 0) != kJobServiceVersion) {
    throw std::runtime_error(std::string("not a version ") + std::to_string(kJobServiceVersion) + " " + kJobRequestSchema);
  }
  Settings settings = process_settings;
  settings.jobs = jobs_from_argument(string_field(request, "job"));
  settings.verdicts_path = string_field(request, "verdicts");
  settings.kernel_manifest =
      default_manifest.empty() || request.contains("kernel_manifest") ? string_field(request, "kernel_manifest") : default_manifest;
  if (request.contains("case_timeout")) {
    const json& timeout = request["case_timeout"];
    if (!timeout.is_number_integer() || timeout.get<int64_t>() < 0 || timeout.get<int64_t>() > 86400) {
      throw std::runtime_error("the request's 'case_timeout' is not a whole number of seconds from 0 to 86400");
    }
    settings.case_timeout_seconds = timeout.get<int>();
  }
  if (settings.jobs.empty()) throw std::runtime_error("the request has no job");
  for (const Job& job : settings.jobs) {
    if (job.mode == mode) continue;
    throw std::runtime_error(mode == Job::Mode::kCheck
                                 ? "job " + job.name() + " times; a served test executable checks (a served ./bench times)"
                                 : "job " + job.name() + " checks; a served ./bench times (a served test executable checks)");
  }
  // A worker that does not answer within the case timeout is stopped: this process's
  // (BACKENDBENCH_CASE_TIMEOUT, as for a run of the tests) or, where it has none, the job's.
  Settings worker_settings = settings;
  if (worker_settings.case_timeout_seconds == 0) worker_settings = settings_for(settings.jobs.front(), settings);
  // As in a run of the tests, jobs of the backends this process has (aten) start no worker.
  if (!needs_no_kernel_worker(settings.jobs)) start_kernel_workers(settings.kernel_manifest, worker_settings);
  start_verdicts(settings.verdicts_path);
  g_case_limit_ms = settings.case_timeout_seconds > 0 ? int64_t{settings.case_timeout_seconds} * 2000 + 10000 : 0;
  RequestCounts counts;
  const int64_t cases_started = now_ms();
  for (const ResolvedJob& job : resolve_jobs(settings.jobs, settings, false)) {
    // As a test does: a Python kernel's module is imported before its first case is timed.
    if (job.backend != nullptr) (void)job.backend->unusable();
    for (size_t c = 0; c < job.case_names.size(); ++c) {
      g_case_started_ms = now_ms();
      const Verdict verdict = run_job_case(job, c);
      g_case_started_ms = -1;
      append_verdict(settings.verdicts_path, verdict);
      if (print_cases) print_case(verdict);
      ++counts.written;
      ++(verdict.status == Verdict::Status::kPassed   ? counts.passed
         : verdict.status == Verdict::Status::kFailed ? counts.failed
                                                      : counts.skipped);
    }
  }
  counts.cases_ms = now_ms() - cases_started;
  return counts;
}

// For one request, standard error (this process's and, forwarded, its workers') goes to `path`.
class ErrorsTo {
 public:
  explicit ErrorsTo(const std::string& path) {
    std::cerr.flush();
    const int log = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) return;
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::close(log);
  }
  ~ErrorsTo() {
    std::cerr.flush();
    if (saved_ < 0) return;
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
  }

 private:
  int saved_ = -1;
};

// Whether a kernel manifest names a Python kernel or op library (python_bridge.h).
bool names_python(const std::string& manifest) {
  std::ifstream lines(manifest);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kPythonKernelLine, 0) == 0 || line.rfind(kOpLibraryLine, 0) == 0) return true;
  }
  return false;
}

bool write_line(int fd, const std::string& line) {
  const std::string text = line + "\n";
  for (size_t done = 0; done < text.size();) {
    // send(MSG_NOSIGNAL) on a socket: a client that went away must not end this process.
    ssize_t wrote = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (wrote < 0 && errno == ENOTSOCK) wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    done += static_cast<size_t>(wrote);
  }
  return true;
}

json response_header() { return {{"schema", kJobResponseSchema}, {"version", kJobServiceVersion}}; }

// Answers one request line. `python`: whether its kernels were Python's (read before the answer:
// once answered, the planner may remove the request's files).
json answer(const std::string& line, const Settings& settings, const std::string& default_manifest, bool print_cases,
            Job::Mode mode, bool& python) {
  json response = response_header();
  const json request = json_text::parse_or_discarded(line);
  python = false;
  try {
    python = request.is_object() && names_python(request.value("kernel_manifest", default_manifest));
  } catch (const std::exception&) {
    // Not a path: the request fails below, saying so.
  }
  const std::string log = request.is_object() && request.contains("log") && request["log"].is_string()
                              ? request["log"].get<std::string>()
                              : "";
  std::optional<ErrorsTo> errors;
  if (!log.empty()) errors.emplace(log);
  try {
    const RequestCounts counts = run_request(request, settings, default_manifest, print_cases, mode);
    response["verdicts"] = counts.written;
    response["passed"] = counts.passed;
    response["failed"] = counts.failed;
    response["skipped"] = counts.skipped;
    response["cases_ms"] = counts.cases_ms;
  } catch (const std::exception& error) {
    std::cerr << "backendbench: error: " << error.what() << "\n";
    response["error"] = error.what();
  }
  return response;
}

std::string dumped(const json& response) { return json_text::dump_replacing_invalid_utf8(response); }

// With a kernel root, a spare worker for the next job, with Python when the last one's kernels were
// Python's (a loop's next candidate is most likely in the same language).
void start_spare_for_next(const Settings& settings, bool python) {
  if (settings.serve_root.empty()) return;
  try {
    start_spare_worker({settings.serve_root}, settings, python);
  } catch (const std::exception& error) {
    std::cerr << error.what() << "\n";
  }
}

// Between two requests: the last one's workers go with it, and a spare starts for the next.
void between_requests(const Settings& settings, bool python) {
  stop_kernel_workers();
  start_spare_for_next(settings, python);
}

// Between two entries of a build's run: their workers are kept for the next entry (the same
// manifest, keep_kernel_workers_between_jobs); a spare starts only where none is kept (the first
// entry's kernels were the reference's alone, or its worker ended).
void between_entries(const Settings& settings, bool python) {
  if (!forget_kernels_keep_workers()) start_spare_for_next(settings, python);
}

// The served entries' listening socket, bound to `address` in the abstract namespace; -1 and a
// message on standard error when it cannot be.
int listen_on(const std::string& address) {
  sockaddr_un where{};
  where.sun_family = AF_UNIX;
  if (address.size() + 1 > sizeof(where.sun_path)) return -1;
  std::memcpy(where.sun_path + 1, address.data(), address.size());  // sun_path[0] = 0: abstract
  const socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + address.size());
  const int socket_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (socket_fd < 0 || ::bind(socket_fd, reinterpret_cast<sockaddr*>(&where), length) != 0 || ::listen(socket_fd, 16) != 0) {
    std::cerr << "backendbench: error: cannot listen on the abstract socket '" << address << "': " << std::strerror(errno)
              << "\n";
    if (socket_fd >= 0) ::close(socket_fd);
    return -1;
  }
  return socket_fd;
}

// One line read from a client's connection (at most 1 MiB); nullopt when it closed first.
std::optional<std::string> read_request_line(int fd) {
  std::string line;
  char buffer[4096];
  while (line.size() < (size_t{1} << 20)) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return std::nullopt;
    line.append(buffer, static_cast<size_t>(got));
    const size_t end = line.find('\n');
    if (end != std::string::npos) return line.substr(0, end);
  }
  return std::nullopt;
}

}  // namespace

int serve_jobs(const Settings& settings, int in_fd, int out_fd, Job::Mode mode) {
  const std::vector<std::string> roots = {settings.serve_root};
  try {
    start_spare_worker(roots, settings, settings.first_spare_python);
  } catch (const std::exception& error) {
    std::cerr << error.what() << "\n";
    return 2;
  }
  FILE* in = ::fdopen(in_fd, "r");
  if (in == nullptr) return 2;
  char* buffer = nullptr;
  size_t capacity = 0;
  for (ssize_t got; (got = ::getline(&buffer, &capacity, in)) >= 0;) {
    std::string line(buffer, static_cast<size_t>(got));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    bool python = false;
    const json response = answer(line, settings, "", /*print_cases=*/false, mode, python);
    const bool answered = write_line(out_fd, dumped(response));
    // The next one's spare starts while the planner reads the verdicts (and builds its next
    // candidate).
    if (!answered) {
      stop_kernel_workers();
      break;
    }
    between_requests(settings, python);
  }
  std::free(buffer);
  return 0;
}

int serve_entries(const Settings& settings, const std::string& default_manifest, int control_fd, int out_fd) {
  const int listening = listen_on(settings.listen_address);
  if (listening < 0) return 2;
  keep_kernel_workers_between_jobs();
  if (!settings.serve_root.empty()) {
    try {
      start_spare_worker({settings.serve_root}, settings);
    } catch (const std::exception& error) {
      std::cerr << error.what() << "\n";
      return 2;
    }
  }
  // This process's CUDA context gets one hardware queue, unless the user chose how many: the
  // queues of a context are made one at a time across the host, and sixteen processes starting
  // CUDA at once over four H200s were ready after 3.1-4.8 s with CUDA's default of 8 against
  // 2.2-2.4 s with 1 (scripts/cuda_start.py). Its streams then share one queue, which no check's
  // finding depends on: this process only checks (./bench times), and a kernel's calls are
  // observed in its worker. Set after the spare worker starts and unset once CUDA has, so that
  // no worker inherits it.
  const bool one_queue = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") == nullptr;
  if (one_queue) ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 1);
  // The planner starts its entries once every server says it listens; CUDA starts after that,
  // while the first entries connect. Connections are answered from now on: the first is this
  // server's next request, the others are told "busy" at once and try the next server, so each
  // of the first entries waits for one server's CUDA start, not for a chain of them (on four
  // H200s, sixteen starting together took 1.6-2.5 s each).
  json listening_line = response_header();
  listening_line["listening"] = settings.listen_address;
  if (!write_line(out_fd, dumped(listening_line))) return 2;
  // Shared with threads that outlive this function until the process ends (never freed).
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    int taken = -1;       // the connection whose request is next, or running
    int64_t taken_ms = 0;  // when it was taken
    bool ending = false;  // the planner closed our standard input
  };
  Shared& shared = *new Shared;
  // Connections are accepted as they come: the first while none is taken becomes the next
  // request; any other is told "busy" at once, and its client tries the next server.
  std::thread([&shared, listening] {
    for (;;) {
      const int connection = ::accept4(listening, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      std::unique_lock<std::mutex> lock(shared.mutex);
      if (shared.taken < 0 && !shared.ending) {
        shared.taken = connection;
        shared.taken_ms = now_ms();
        shared.changed.notify_all();
      } else {
        lock.unlock();
        json busy = response_header();
        busy["busy"] = true;
        (void)write_line(connection, dumped(busy));
        ::close(connection);
      }
    }
  }).detach();
  // Ends with its planner: standard input at its end (the planner stopped it, or died).
  std::thread([&shared, control_fd] {
    char ignored[256];
    while (::read(control_fd, ignored, sizeof(ignored)) > 0) {
    }
    std::lock_guard<std::mutex> lock(shared.mutex);
    shared.ending = true;
    shared.changed.notify_all();
  }).detach();
  // CUDA starts once here, not in the first entry's first case.
  const int64_t started = now_ms();
  if (reference_device(settings).is_cuda()) {
    try {
      (void)at::zeros({1}, at::TensorOptions().device(reference_device(settings))).sum().item<float>();
      // In the run's servers.log: how long the first entry here waited for CUDA at most.
      std::cerr << "backendbench: supervisor " << settings.listen_address << ": CUDA started in " << now_ms() - started
                << " ms\n";
    } catch (const std::exception&) {
      // Left for the cases, which say why.
    }
  }
  if (one_queue) ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  // A reference that hangs would hold this server for good: past twice the case timeout and
  // 10 s (the tests' own watch), the process ends and the entry fails with what it printed.
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const int64_t started = g_case_started_ms.load(), limit = g_case_limit_ms.load();
      if (started >= 0 && limit > 0 && now_ms() - started > limit) {
        std::cerr << "\n[  TIMEOUT ] a case ran longer than " << limit / 1000
                  << " s in the supervisor (twice the case timeout and 10 s); a hang?\n"
                  << std::flush;
        std::_Exit(1);
      }
    }
  }).detach();
  for (;;) {
    int connection = -1;
    int64_t waited_ms = 0;
    {
      std::unique_lock<std::mutex> lock(shared.mutex);
      shared.changed.wait(lock, [&] { return shared.taken >= 0 || shared.ending; });
      if (shared.ending && shared.taken < 0) break;
      connection = shared.taken;
      waited_ms = now_ms() - shared.taken_ms;
    }
    bool python = false;
    const int64_t read_ms = now_ms();
    const std::optional<std::string> line = read_request_line(connection);
    json response = line ? answer(*line, settings, default_manifest, /*print_cases=*/true, Job::Mode::kCheck, python) : json();
    // Where a served entry's time went beyond its cases (scripts/gpu_scaling.py): waiting here
    // (for CUDA's start, or the request before), and the request's own handling.
    if (line) response["waited_ms"] = waited_ms, response["served_ms"] = now_ms() - read_ms;
    {
      // Free before the client has its answer, so that the entry CTest starts after it is never
      // told "busy" here; its request waits for the workers' change below.
      std::lock_guard<std::mutex> lock(shared.mutex);
      shared.taken = -1;
    }
    if (line) (void)write_line(connection, dumped(response));
    ::close(connection);
    between_entries(settings, python);
  }
  ::close(listening);
  stop_kernel_workers();
  return 0;
}

}  // namespace backendbench
