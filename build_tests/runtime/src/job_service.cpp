// A supervisor serving check jobs; see job_service.h.
#include "backendbench/job_service.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/python_bridge.h"
#include "backendbench/run_job.h"
#include "backendbench/verdict.h"
#include "backendbench/worker.h"

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

// Runs one request's jobs; returns how many verdicts it wrote. Throws when the jobs cannot run
// at all (a bad request, a manifest that does not load): the response's error.
size_t run_request(const json& request, const Settings& process_settings) {
  if (!request.is_object() || request.value("schema", "") != kJobRequestSchema ||
      request.value("version", 0) != kJobServiceVersion) {
    throw std::runtime_error(std::string("not a version ") + std::to_string(kJobServiceVersion) + " " + kJobRequestSchema);
  }
  Settings settings = process_settings;
  settings.jobs = jobs_from_argument(string_field(request, "job"));
  settings.verdicts_path = string_field(request, "verdicts");
  settings.kernel_manifest = string_field(request, "kernel_manifest");
  if (settings.jobs.empty()) throw std::runtime_error("the request has no job");
  for (const Job& job : settings.jobs) {
    if (job.mode != Job::Mode::kCheck) throw std::runtime_error("job " + job.name() + " times; a served supervisor checks (./bench times)");
  }
  // A worker that does not answer within the case timeout is stopped: this process's
  // (BACKENDBENCH_CASE_TIMEOUT, as for a run of the tests) or, where it has none, the job's.
  Settings worker_settings = settings;
  if (worker_settings.case_timeout_seconds == 0) worker_settings = settings_for(settings.jobs.front(), settings);
  start_kernel_workers(settings.kernel_manifest, worker_settings);
  start_verdicts(settings.verdicts_path);
  size_t written = 0;
  for (const ResolvedJob& job : resolve_jobs(settings.jobs, settings, false)) {
    // As a test does: a Python kernel's module is imported before its first case is timed.
    if (job.backend != nullptr) (void)job.backend->unusable();
    for (size_t c = 0; c < job.case_names.size(); ++c) {
      append_verdict(settings.verdicts_path, run_job_case(job, c));
      ++written;
    }
  }
  return written;
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
    const ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote <= 0) return false;
    done += static_cast<size_t>(wrote);
  }
  return true;
}

}  // namespace

int serve_jobs(const Settings& settings, int in_fd, int out_fd) {
  const std::vector<std::string> roots = {settings.serve_root};
  try {
    start_spare_worker(roots, settings);
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
    json response = {{"schema", kJobResponseSchema}, {"version", kJobServiceVersion}};
    const json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
    // Read before answering: once answered, the planner may remove the request's files.
    bool python = false;
    try {
      python = request.is_object() && names_python(request.value("kernel_manifest", ""));
    } catch (const std::exception&) {
      // Not a path: the request fails below, saying so.
    }
    {
      const std::string log = request.is_object() ? request.value("log", "") : "";
      std::optional<ErrorsTo> errors;
      if (!log.empty()) errors.emplace(log);
      try {
        response["verdicts"] = run_request(request, settings);
      } catch (const std::exception& error) {
        std::cerr << "backendbench: error: " << error.what() << "\n";
        response["error"] = error.what();
      }
    }
    const bool answered = write_line(out_fd, response.dump(-1, ' ', false, json::error_handler_t::replace));
    // The request's workers go with it; the next one's spare starts while the planner reads the
    // verdicts (and builds its next candidate). It starts Python too when this request's kernels
    // were Python's: a loop's next candidate is most likely in the same language.
    stop_kernel_workers();
    if (!answered) break;
    try {
      start_spare_worker(roots, settings, python);
    } catch (const std::exception& error) {
      std::cerr << error.what() << "\n";
    }
  }
  std::free(buffer);
  return 0;
}

}  // namespace backendbench
