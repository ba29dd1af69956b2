// Child processes of the command and the agents (cmake, ctest, ./bench, git, nvidia-smi): started
// with an argument vector (no shell), their output into a log file, and polled while they run so
// that the caller can print progress.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace backendbench::planner {

// Seconds of the steady clock since `start`: how long a phase, a build or a child took.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct ProcessOptions {
  std::string log_path;                             // stdout and stderr; "": inherited
  std::map<std::string, std::string> environment;  // added to (or replacing in) this process's
  // Killed (SIGKILL) after this many seconds, which run_process reports as status 124 (as
  // timeout(1) does) and says in the log; 0: no limit.
  double timeout_seconds = 0;
};
constexpr int kProcessTimedOut = 124;

// Runs `argv` to its end and returns its exit status (128 + signal when killed by one).
// `poll`, when given, is called about every `poll_seconds` while it runs. Throws
// std::runtime_error when it cannot be started (the program's name in the message).
int run_process(const std::vector<std::string>& argv, const ProcessOptions& options,
                const std::function<void()>& poll = nullptr, double poll_seconds = 0.5);

// A child whose standard input and output are pipes to this process (a served supervisor: request
// lines in, response lines out).
struct PipedChild {
  pid_t pid = -1;
  int to = -1;    // its standard input
  int from = -1;  // its standard output
};

// Starts `argv` (argv[0] a path) with this process's environment and `environment` set over it, its
// standard error appended to `log_fd` (-1: inherited). Neither pipe reaches any other child.
// Throws std::runtime_error when it cannot be started.
PipedChild start_piped(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment,
                       int log_fd);

// This process's environment ("NAME=value" entries) with `added` set over it.
std::vector<std::string> environment_with(const std::map<std::string, std::string>& added);

// The path of an executable `program` in a folder of PATH; "" when there is none.
std::string find_on_path(const std::string& program);

// Runs `argv` and returns its standard output; "" when it cannot be started or fails.
std::string process_output(const std::vector<std::string>& argv);

// The last `lines` lines of a text file ("" when unreadable).
std::string tail_of_file(const std::string& path, int lines);

}  // namespace backendbench::planner
