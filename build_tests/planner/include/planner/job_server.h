// The planner's side of a supervisor serving check jobs (a test executable started with
// --backendbench_serve; the exchange is the runtime's job_service.h): started on first use, kept
// for the next request, started again after it dies or is stopped. Whoever reads the verdicts
// reads them from the request's file (job_verdicts); a case without one fails there.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace backendbench::planner {

class JobServer {
 public:
  // `argv`: the executable and its flags (--backendbench_serve=<kernel root> among them); what it
  // prints outside a request goes to `log_path`.
  JobServer(std::vector<std::string> argv, std::string log_path);
  ~JobServer();
  JobServer(const JobServer&) = delete;
  JobServer& operator=(const JobServer&) = delete;

  struct Request {
    std::string job;              // a job's JSON, or the path of a JSON Lines file of jobs
    std::string verdicts;         // where its verdicts go
    std::string kernel_manifest;  // the kernels it loads
    std::string log;              // what it prints while it runs the request
  };
  // Runs `request`: "" when the server answered that it ran it, otherwise why not (its error, or
  // that it died or did not answer within `timeout_seconds`, when it is stopped).
  std::string run(const Request& request, double timeout_seconds);
  // Starts the server now if it is not running, so that its spare worker is ready by its first
  // request (it starts on first use otherwise).
  void start_ahead();

 private:
  void start();
  void stop(int grace_ms = 2000);
  bool send(const Request& request);  // false when the server's input is closed (it ended)
  std::string read_response(double timeout_seconds);
  // "; its last output:\n<the last lines of its log>" ("" when it printed nothing): why a server
  // that ended by itself did (it could not start its sandbox, say).
  std::string last_output() const;

  std::vector<std::string> argv_;
  std::string log_path_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffered_;  // read from the server past the last response line
};

}  // namespace backendbench::planner
