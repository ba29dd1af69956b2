// A served supervisor, the planner's side; see job_server.h.
#include "planner/job_server.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "language/json_text.h"
#include "planner/process.h"
#include "language/job.h"

namespace backendbench::planner {

JobServer::JobServer(std::vector<std::string> argv, std::string log_path)
    : argv_(std::move(argv)), log_path_(std::move(log_path)) {}

JobServer::~JobServer() { stop(); }

void JobServer::start() {
  const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  // Not killed when the planner dies (PR_SET_PDEATHSIG fires when the starting *thread* ends, and
  // planners start servers from threads that end before the server should): a planner that dies
  // closes the server's input (only it holds the other end), and the server ends, with its workers.
  PipedChild child;
  try {
    child = start_piped(argv_, {}, log);
  } catch (...) {
    if (log >= 0) ::close(log);
    throw;
  }
  if (log >= 0) ::close(log);
  pid_ = child.pid;
  to_ = child.to;
  from_ = child.from;
  buffered_.clear();
}

void JobServer::stop(int grace_ms) {
  if (pid_ < 0) return;
  // Its input closed, a server ends by itself, removing its workers' scratch folders; one that
  // does not within the grace (hung) is killed.
  ::close(to_);
  ::close(from_);
  int status = 0;
  bool ended = waitpid(pid_, &status, WNOHANG) == pid_;
  for (int waited = 0; !ended && waited < grace_ms; waited += 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ended = waitpid(pid_, &status, WNOHANG) == pid_;
  }
  if (!ended) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  to_ = from_ = -1;
}

std::string JobServer::last_output() const {
  std::string tail = tail_of_file(log_path_, 6);
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  return tail.empty() ? "" : "; its last output:\n" + tail;
}

void JobServer::start_ahead() {
  if (pid_ < 0) start();
}

std::string JobServer::run(const Request& request, double timeout_seconds) {
  // A server that ended since its last request (killed from outside, say) never saw this one:
  // it is sent again to a new one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (pid_ < 0) start();
    if (send(request)) return read_response(timeout_seconds);
    stop();
  }
  return "the test executable serving the job ended before it read the request" + last_output();
}

bool JobServer::send(const Request& request) {
  const nlohmann::json line = {{"schema", kJobRequestSchema}, {"version", kJobServiceVersion}, {"job", request.job},
                               {"verdicts", request.verdicts}, {"kernel_manifest", request.kernel_manifest},
                               {"log", request.log}};
  const std::string text = json_text::dump(line) + "\n";
  // A server that died since the last request breaks the pipe: its SIGPIPE must not end the
  // planner. Blocked in this thread only (other threads, and the planner's own output, keep the
  // default), and taken back if the write raised it.
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  bool sent = true;
  for (size_t done = 0; sent && done < text.size();) {
    const ssize_t wrote = ::write(to_, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    sent = wrote > 0;
    if (sent) done += static_cast<size_t>(wrote);
  }
  if (!sent && errno == EPIPE) {
    const timespec no_wait{0, 0};
    while (sigtimedwait(&pipe_signal, nullptr, &no_wait) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return sent;
}

std::string JobServer::read_response(double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    const size_t newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      const std::string answer = buffered_.substr(0, newline);
      buffered_.erase(0, newline + 1);
      const nlohmann::json response = json_text::parse_or_discarded(answer);
      if (!response.is_object() || response.value("schema", "") != kJobResponseSchema ||
          response.value("version", 0) != kJobServiceVersion) {
        stop();
        return "the test executable serving the job answered with a line that is not a version " +
               std::to_string(kJobServiceVersion) + " " + kJobResponseSchema;
      }
      if (response.contains("error") && response["error"].is_string()) return response["error"].get<std::string>();
      return "";
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop(0);
      return "the test executable serving the job did not answer within " + std::to_string(static_cast<int>(timeout_seconds)) +
             " s; it was stopped";
    }
    pollfd ready{from_, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) continue;
    char chunk[4096];
    const ssize_t got = ::read(from_, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      stop();
      return "the test executable serving the job ended before it answered" + last_output();
    }
    buffered_.append(chunk, static_cast<size_t>(got));
  }
}

}  // namespace backendbench::planner
