// backendbench-entry: a correctness CTest entry of `backendbench run` as a client of the
// supervisors the run keeps for its correctness phase (job_service.h: serve_entries). It starts
// no libtorch and no CUDA of its own: it hands its job to a free supervisor of its test
// executable on its GPU, prints what the supervisor logged, and exits as the test executable
// would (0 passed, 1 a case failed, 77 every case skipped). Where no supervisor answers (none
// was started, all are busy, it is another host), it becomes the test executable itself (exec),
// so the entry runs as it always did.
//
//   backendbench-entry <servers prefix> <test executable> --backendbench_job=<job> \
//       --backendbench_verdicts=<file> [--case-timeout=<s>]
//
// It trusts nothing a kernel wrote: its counts are the supervisor's, which never loads kernel
// code, and its sockets are abstract, out of a sandboxed worker's network namespace.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "backendbench/gpu_slot.h"
#include "language/job.h"
#include "language/json_text.h"

namespace {

using nlohmann::json;
namespace json_text = backendbench::json_text;

constexpr int kAllSkippedExitCode = 77;

// The entry's own arguments, when it has only those a served request carries.
struct EntryArguments {
  std::string job, verdicts;
  std::optional<int> case_timeout;
};

std::optional<EntryArguments> served_arguments(int argc, char** argv) {
  EntryArguments arguments;
  for (int i = 3; i < argc; ++i) {
    const std::string argument = argv[i];
    const auto value_of = [&](const char* flag) -> std::optional<std::string> {
      const std::string prefix = std::string(flag) + "=";
      if (argument.rfind(prefix, 0) != 0) return std::nullopt;
      return argument.substr(prefix.size());
    };
    if (const auto job = value_of("--backendbench_job")) {
      arguments.job = *job;
    } else if (const auto verdicts = value_of("--backendbench_verdicts")) {
      arguments.verdicts = *verdicts;
    } else if (const auto timeout = value_of("--case-timeout")) {
      char* end = nullptr;
      const long seconds = std::strtol(timeout->c_str(), &end, 10);
      if (timeout->empty() || *end != '\0' || seconds < 0 || seconds > 86400) return std::nullopt;
      arguments.case_timeout = static_cast<int>(seconds);
    } else {
      return std::nullopt;  // anything else: the executable itself reads it
    }
  }
  if (arguments.job.empty() || arguments.verdicts.empty()) return std::nullopt;
  return arguments;
}

// The GPU CTest gave this entry ("cpu": none); nullopt when its allocation is not one GPU's.
std::optional<std::string> ctest_gpu() {
  try {
    const std::optional<backendbench::GpuSlot> slot = backendbench::ctest_gpu_slot(std::getenv);
    return slot ? slot->id : "cpu";
  } catch (const std::exception&) {
    return std::nullopt;  // the executable says what is wrong with it
  }
}

int connect_to(const std::string& address) {
  sockaddr_un where{};
  where.sun_family = AF_UNIX;
  if (address.size() + 1 > sizeof(where.sun_path)) return -1;
  std::memcpy(where.sun_path + 1, address.data(), address.size());
  const socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + address.size());
  const int socket_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (socket_fd < 0) return -1;
  if (::connect(socket_fd, reinterpret_cast<sockaddr*>(&where), length) != 0) {
    ::close(socket_fd);
    return -1;
  }
  return socket_fd;
}

bool send_line(int fd, const std::string& line) {
  const std::string text = line + "\n";
  for (size_t done = 0; done < text.size();) {
    const ssize_t wrote = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    done += static_cast<size_t>(wrote);
  }
  return true;
}

// The supervisor's one response line; nullopt when the connection closed first (it ended).
std::optional<json> read_response(int fd) {
  std::string text;
  char buffer[4096];
  for (;;) {
    const size_t end = text.find('\n');
    if (end != std::string::npos) {
      json response = json_text::parse_or_discarded(text.substr(0, end));
      if (response.is_discarded()) return std::nullopt;
      return response;
    }
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return std::nullopt;
    text.append(buffer, static_cast<size_t>(got));
  }
}

void print_file(const std::string& path) {
  std::ifstream in(path);
  std::cout << in.rdbuf();
  std::cout.flush();
}

[[noreturn]] void run_executable(char** argv) {
  std::cout.flush();
  ::execv(argv[2], argv + 2);
  std::cerr << "backendbench-entry: error: cannot run " << argv[2] << ": " << std::strerror(errno) << "\n";
  std::_Exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: backendbench-entry <servers prefix> <test executable> [its arguments]\n";
    return 2;
  }
  const std::string prefix = argv[1], executable = argv[2];
  const std::optional<EntryArguments> arguments = served_arguments(argc, argv);
  const std::optional<std::string> gpu = ctest_gpu();
  if (!arguments || !gpu || prefix.empty()) run_executable(argv);

  // The request's log: what the supervisor and its kernel workers print for this entry.
  const char* temporary = std::getenv("TMPDIR");
  std::string log = std::string(temporary != nullptr && *temporary ? temporary : "/tmp") + "/backendbench-entry-XXXXXX";
  const int log_fd = ::mkstemp(log.data());
  if (log_fd < 0) run_executable(argv);
  ::close(log_fd);
  json request = {{"schema", backendbench::kJobRequestSchema},
                  {"version", backendbench::kJobServiceVersion},
                  {"job", arguments->job},
                  {"verdicts", arguments->verdicts},
                  {"log", log}};
  if (arguments->case_timeout) request["case_timeout"] = *arguments->case_timeout;

  for (int k = 0; k < backendbench::kMostServedEntrySlots; ++k) {
    const std::string address = backendbench::served_entry_address(prefix, executable, *gpu, k);
    const auto connected = std::chrono::steady_clock::now();
    const int connection = connect_to(address);
    if (connection < 0) continue;  // not started, or it ended (an abstract name costs no file to try)
    if (!send_line(connection, json_text::dump(request))) {
      ::close(connection);
      continue;
    }
    const std::optional<json> response = read_response(connection);
    ::close(connection);
    if (response && response->is_object() && response->value("busy", false)) continue;
    const auto answered_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - connected).count();
    // The outcome first, then the log: CTest keeps only the start of a long output.
    int status = 1;
    if (!response || !response->is_object() || response->value("schema", "") != backendbench::kJobResponseSchema) {
      std::cout << "backendbench-entry: error: the supervisor serving this entry (" << address
                << ") ended before it answered; expected its verdicts\n";
    } else if (response->contains("error")) {
      std::cout << "backendbench-entry: error: the served job did not run: " << response->value("error", "") << "\n";
    } else {
      const size_t passed = response->value("passed", size_t{0}), failed = response->value("failed", size_t{0}),
                   skipped = response->value("skipped", size_t{0});
      std::cout << "backendbench-entry: " << passed << " passed, " << failed << " failed, " << skipped
                << " skipped (served by " << address << " in " << answered_ms << " ms; waited "
                << response->value("waited_ms", int64_t{0}) << " ms, handled in " << response->value("served_ms", int64_t{0})
                << " ms)\n";
      // GoogleTest's summary line too, which tools read from CTest's JUnit (scripts/gpu_scaling.py).
      std::cout << "[==========] " << passed + failed + skipped << " tests from 1 test suite ran. ("
                << response->value("cases_ms", int64_t{0}) << " ms total)\n";
      status = failed > 0 ? 1 : skipped > 0 && passed == 0 ? kAllSkippedExitCode : 0;
    }
    print_file(log);
    ::unlink(log.c_str());
    return status;
  }
  ::unlink(log.c_str());
  run_executable(argv);
}
