// main() of the generated test executables: GoogleTest's, plus what isolation needs.
// - A run in which every selected case was skipped (a CUDA kernel on a machine without a GPU)
//   exits with kAllSkippedExitCode, which the generated CTest entries map to "Skipped".
// - A case that crashes (segfault, abort, bus error, illegal instruction, FPE) prints which
//   case and which signal before the process dies of it, so the CTest entry of that operator
//   and backend fails with the cause; other entries are other processes and unaffected.
// - A case that runs longer than --case-timeout=<s> (or BACKENDBENCH_CASE_TIMEOUT; 0: none)
//   is reported by name and the process exits 1: a hang fails its operator, not the whole run.
// With --backendbench_serve or --backendbench_listen, it serves check jobs instead (job_service.h).
// Before the tests: the settings (one located error and exit 2 on a bad value; --help lists
// them), the kernel manifest (every kernel library, loaded), the run's salt (printed), and one
// test per (operator, backend, case).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "backendbench/correctness.h"
#include "supervisor/job_service.h"
#include "supervisor/run_start.h"

namespace {

constexpr int kAllSkippedExitCode = 77;
constexpr int kTimedOutExitCode = 1;

// The running case, readable from a signal handler: a fixed buffer written before each case.
char g_running_case[4096] = "";
std::atomic<int64_t> g_case_started_ms{-1};  // -1: between cases

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void write_stderr(const char* text) {
  const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_crash(int signal_number) {
  write_stderr("\n[  CRASHED ] ");
  write_stderr(g_running_case[0] != '\0' ? g_running_case : "(between cases)");
  const backendbench::SignalText signal = backendbench::signal_text(signal_number);
  write_stderr(": the process received ");
  write_stderr(signal.prefix);
  write_stderr(signal.name);
  write_stderr(" (");
  write_stderr(signal.description);
  write_stderr(") while running this case\n");
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

class CaseTracker : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo& test) override {
    std::string name = std::string(test.test_suite_name()) + "." + test.name();
    if (test.value_param() != nullptr) name += std::string(" [") + test.value_param() + "]";
    std::strncpy(g_running_case, name.c_str(), sizeof(g_running_case) - 1);
    g_case_started_ms = now_ms();
  }
  void OnTestEnd(const ::testing::TestInfo&) override { g_case_started_ms = -1; }
};

}  // namespace

void backendbench::restart_case_clock() {
  if (g_case_started_ms.load() >= 0) g_case_started_ms = now_ms();
}

namespace {

// Ends the process once the tests are done, without its static destructors and atexit
// handlers: libtorch's and CUDA's teardown took 0.3 s of a 1.2-1.7 s CTest entry on an H200.
// Everything that must outlive the process is written by then (each verdict is appended and
// closed as its case ends, the XML report inside RUN_ALL_TESTS); what must be cleaned up
// registers with at_quick_exit too (the workers' scratch root, worker.cpp).
[[noreturn]] void finish(int exit_code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::quick_exit(exit_code);
}

void watch_for_hangs(int timeout_seconds) {
  std::thread([timeout_seconds] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const int64_t started = g_case_started_ms.load();
      if (started >= 0 && now_ms() - started > int64_t{timeout_seconds} * 1000) {
        std::cout.flush();
        const std::string message = "\n[  TIMEOUT ] " + std::string(g_running_case) + ": the case ran longer than " +
                                    std::to_string(timeout_seconds) +
                                    " s (--case-timeout / BACKENDBENCH_CASE_TIMEOUT); a hang?\n";
        write_stderr(message.c_str());
        std::_Exit(kTimedOutExitCode);
      }
    }
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace backendbench;
  std::ostringstream start_log;
  static const std::optional<Settings> started = start_run(Frontend::kTests, argc, argv, kKernelManifest, start_log);
  if (!started) return 2;
  const Settings& settings = *started;
  // A served supervisor's standard output carries its responses only.
  (settings.serves() ? std::cerr : std::cout) << start_log.str() << std::flush;
  if (settings.serves()) {
    // The responses get the original standard output; what anything prints goes to stderr.
    const int protocol_out = dup(STDOUT_FILENO);
    if (protocol_out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 2;
    if (!settings.listen_address.empty()) finish(serve_entries(settings, kKernelManifest, STDIN_FILENO, protocol_out));
    return serve_jobs(settings, STDIN_FILENO, protocol_out);
  }
  register_correctness_tests(settings);
  const int timeout_seconds = settings.case_timeout_seconds;
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new CaseTracker);
  for (int signal_number : {SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE}) std::signal(signal_number, on_crash);
  // The kernel worker's own limit (kernel_workers.h) fails a hanging kernel's case first; this one,
  // later, catches the rest (the reference, the harness).
  if (timeout_seconds > 0) watch_for_hangs(2 * timeout_seconds + 10);
  const int result = RUN_ALL_TESTS();
  const ::testing::UnitTest& run = *::testing::UnitTest::GetInstance();
  // A CTest entry names its backend in its filter: a kernel whose worker does not list it (a
  // library that fails to register it, or lies) must fail the entry, not pass it with no tests.
  if (run.test_to_run_count() == 0 && !::testing::GTEST_FLAG(filter).empty() && ::testing::GTEST_FLAG(filter) != "*") {
    std::cerr << "backendbench: error: no test matches --gtest_filter=" << ::testing::GTEST_FLAG(filter)
              << "; expected a filter that selects cases (a kernel its worker did not list has none)\n";
    finish(1);
  }
  if (result == 0 && run.test_to_run_count() > 0 && run.skipped_test_count() == run.test_to_run_count()) {
    finish(kAllSkippedExitCode);
  }
  finish(result);
}
