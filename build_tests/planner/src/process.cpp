// Child processes through posix_spawn; see process.h.
#include "planner/process.h"

#include "planner/interruption.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace backendbench::planner {

std::vector<std::string> environment_with(const std::map<std::string, std::string>& added) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    if (added.count(name) == 0) entries.push_back(text);
  }
  for (const auto& [name, value] : added) entries.push_back(name + "=" + value);
  return entries;
}

namespace {

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& text : strings) result.push_back(text.data());
  result.push_back(nullptr);
  return result;
}

pid_t start(std::vector<std::string> argv, const ProcessOptions& options, int stdout_fd, bool own_group = false) {
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (own_group) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // A process group of its own is a background group: reading the terminal would stop it (SIGTTIN).
  if (own_group) posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!options.log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  } else if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  std::vector<std::string> environment = environment_with(options.environment);
  std::vector<char*> argument_pointers = pointers(argv);
  std::vector<char*> environment_pointers = pointers(environment);
  pid_t pid = 0;
  const int status = posix_spawnp(&pid, argv[0].c_str(), &actions, &attributes, argument_pointers.data(),
                                  environment_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (status != 0) throw std::runtime_error(argv[0] + ": cannot start (" + std::strerror(status) + ")");
  return pid;
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

PipedChild start_piped(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment,
                       int log_fd) {
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(to_child[0]);
    ::close(to_child[1]);
    throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(error));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  if (log_fd >= 0) posix_spawn_file_actions_adddup2(&actions, log_fd, STDERR_FILENO);
  std::vector<std::string> arguments = argv, environment_entries = environment_with(environment);
  std::vector<char*> argument_pointers = pointers(arguments), environment_pointers = pointers(environment_entries);
  pid_t pid = -1;
  const int status = posix_spawn(&pid, arguments[0].c_str(), &actions, nullptr, argument_pointers.data(),
                                 environment_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (status != 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(status));
  }
  return {pid, to_child[1], from_child[0]};
}

namespace {

// How long an interrupted child's group has to end after SIGINT before it is killed.
constexpr std::chrono::seconds kInterruptGrace{10};

// A pidfd of a child (pidfd_open), closed with this object; -1 where the kernel has none.
struct ChildPidfd {
  explicit ChildPidfd(pid_t pid) : fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))) {}
  ~ChildPidfd() {
    if (fd >= 0) ::close(fd);
  }
  ChildPidfd(const ChildPidfd&) = delete;
  ChildPidfd& operator=(const ChildPidfd&) = delete;
  const int fd;
};

// Waits at most `wait` for the child behind `pidfd` to end, waking as soon as it does (without a
// pidfd, in steps of 10 ms): a run's phases follow one another, and a fixed sleep between polls
// added up to half a second after each (the build, the correctness phase) to a 2 s run.
void wait_for_end(int pidfd, std::chrono::milliseconds wait) {
  if (wait.count() <= 0) return;
  if (pidfd >= 0) {
    pollfd ended{pidfd, POLLIN, 0};
    (void)::poll(&ended, 1, static_cast<int>(wait.count()));
    return;
  }
  std::this_thread::sleep_for(std::min(wait, std::chrono::milliseconds(10)));
}

}  // namespace

int run_process(const std::vector<std::string>& argv, const ProcessOptions& options, const std::function<void()>& poll,
                double poll_seconds) {
  // Under an interrupt watch (a run), a child has a process group of its own, which is stopped
  // whole when the run is interrupted (CTest, interrupted itself, leaves its tests running), and
  // nothing new starts once it is.
  const bool watched = interrupt_watch_active();
  if (watched && interrupting_signal() != 0) return kInterruptedStatus;
  const pid_t pid = start(argv, options, -1, watched);
  if (watched) set_waited_group(pid);
  const ChildPidfd pidfd(pid);
  const bool limited = options.timeout_seconds > 0;
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::milliseconds(static_cast<int64_t>(options.timeout_seconds * 1000));
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(poll_seconds * 1000));
  auto last_poll = started;
  std::optional<std::chrono::steady_clock::time_point> stopping_since;
  const auto stop = [&](int signal_number) { watched ? ::killpg(pid, signal_number) : ::kill(pid, signal_number); };
  const auto ended = [&](int status) {
    if (watched) {
      if (stopping_since) ::killpg(pid, SIGKILL);  // what the child left of its group
      set_waited_group(0);
    }
    return status;
  };
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, poll || limited || watched ? WNOHANG : 0);
    if (done == pid) return ended(exit_status(status));
    if (done < 0 && errno != EINTR) throw std::runtime_error(argv[0] + ": lost track of the process");
    const auto now = std::chrono::steady_clock::now();
    if (watched && interrupting_signal() != 0) {
      // Asked first (SIGINT: CTest and Ninja stop their children), then killed.
      if (!stopping_since) {
        stopping_since = now;
        stop(SIGINT);
      } else if (now - *stopping_since > kInterruptGrace) {
        stop(SIGKILL);
      }
    }
    if (limited && now >= deadline) {
      stop(SIGKILL);
      waitpid(pid, &status, 0);
      if (!options.log_path.empty()) {
        std::ofstream(options.log_path, std::ios::app)
            << "\n[backendbench] " << argv[0] << " ran longer than " << options.timeout_seconds << " s and was stopped\n";
      }
      return ended(kProcessTimedOut);
    }
    if (poll && now - last_poll >= interval) {
      poll();
      last_poll = now;
    }
    // Until the next poll or the deadline, whichever comes first, or the child's end (under a
    // watch at most a fifth of a second: the signal may have woken another thread than this one).
    auto until = poll ? last_poll + interval : deadline;
    if (limited) until = std::min(until, deadline);
    if (watched) until = std::min(until, now + std::chrono::milliseconds(200));
    wait_for_end(pidfd.fd, std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()) +
                            std::chrono::milliseconds(1));
  }
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string folders = path == nullptr ? "" : path;
  for (size_t start = 0; start <= folders.size();) {
    size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    const std::string folder = folders.substr(start, end - start);
    if (!folder.empty() && access((folder + "/" + program).c_str(), X_OK) == 0) return folder + "/" + program;
    start = end + 1;
  }
  return "";
}

std::string process_output(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "";
  const ProcessOptions options;
  pid_t pid = 0;
  try {
    pid = start(argv, options, pipe_fds[1]);
  } catch (const std::runtime_error&) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return "";
  }
  close(pipe_fds[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) output.append(buffer, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return exit_status(status) == 0 ? output : "";
}

std::string tail_of_file(const std::string& path, int lines) {
  std::ifstream in(path);
  std::deque<std::string> kept;
  for (std::string line; std::getline(in, line);) {
    kept.push_back(line);
    if (static_cast<int>(kept.size()) > lines) kept.pop_front();
  }
  std::string text;
  for (const std::string& line : kept) text += line + "\n";
  return text;
}

}  // namespace backendbench::planner
