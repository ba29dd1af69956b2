// Progress of a running phase, read from the verdict files the tests and ./bench append to (one
// JSON line per finished case, flushed at once): cases done out of the total the suites list,
// failures so far, and the time left at the rate so far.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace backendbench::planner {

struct ProgressCounts {
  int64_t done = 0, failed = 0, total = 0;
};

// Reads whole new lines of JSON Lines files as they grow; a file that does not exist yet counts nothing.
class VerdictFollower {
 public:
  explicit VerdictFollower(std::vector<std::string> paths) : paths_(std::move(paths)) {}
  // Reads what was appended since the last call and returns the counts so far (total left 0).
  ProgressCounts update();

 private:
  std::vector<std::string> paths_;
  std::map<std::string, uint64_t> offsets_;
  ProgressCounts counts_;
};

// "correctness  120/456 cases  2 failed  0:41 elapsed  about 1:52 left" (no estimate before the first case).
std::string progress_line(const std::string& phase, const ProgressCounts& counts, double elapsed_seconds);
// m:ss, or h:mm:ss from an hour.
std::string clock_text(double seconds);

// Prints progress: rewritten in place on a terminal, a line every 10 s otherwise (logs, CI).
class ProgressPrinter {
 public:
  ProgressPrinter();
  void show(const std::string& line, bool final);

 private:
  bool terminal_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace backendbench::planner
