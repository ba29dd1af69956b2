// Following verdict files while a phase runs; see progress.h.
#include "planner/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "backendbench/verdict.h"

namespace backendbench::planner {

ProgressCounts VerdictFollower::update() {
  for (const std::string& path : paths_) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    uint64_t& offset = offsets_[path];
    in.seekg(0, std::ios::end);
    const uint64_t size = static_cast<uint64_t>(in.tellg());
    if (size < offset) offset = 0;  // replaced since: read it again
    in.seekg(static_cast<std::streamoff>(offset));
    std::string text(size - offset, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    const size_t complete = text.rfind('\n');
    if (complete == std::string::npos) continue;
    size_t start = 0;
    while (start <= complete) {
      const size_t end = text.find('\n', start);
      const std::string line = text.substr(start, end - start);
      start = end + 1;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      ++counts_.done;
      try {
        counts_.failed += verdict_from_json(line).status == Verdict::Status::kFailed;
      } catch (const std::exception&) {
        ++counts_.failed;  // a line that is not a verdict: the case did not end well
      }
    }
    offset += complete + 1;
  }
  return counts_;
}

std::string clock_text(double seconds) {
  const long total = std::lround(std::max(0.0, seconds));
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%ld:%02ld", total / 60, total % 60);
  }
  return text;
}

std::string progress_line(const std::string& phase, const ProgressCounts& counts, double elapsed_seconds) {
  std::string line = phase + "  " + std::to_string(counts.done) + "/" + std::to_string(counts.total) + " cases  " +
                     std::to_string(counts.failed) + " failed  " + clock_text(elapsed_seconds) + " elapsed";
  if (counts.done > 0 && counts.done < counts.total) {
    const double left = elapsed_seconds / static_cast<double>(counts.done) * static_cast<double>(counts.total - counts.done);
    line += "  about " + clock_text(left) + " left";
  }
  return line;
}

ProgressPrinter::ProgressPrinter() : terminal_(isatty(STDOUT_FILENO) != 0) {}

void ProgressPrinter::show(const std::string& line, bool final) {
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    std::cout << "\r\033[K" << line << (final ? "\n" : "") << std::flush;
  } else if (final || now - last_ >= std::chrono::seconds(10)) {
    std::cout << line << "\n" << std::flush;
    last_ = now;
  }
}

}  // namespace backendbench::planner
