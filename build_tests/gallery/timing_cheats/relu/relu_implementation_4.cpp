// Attack: write its own answers on the worker's descriptor. At load it finds the pipe the worker
// answers its supervisor on (the one write-only pipe that is not stdout or stderr), puts a pipe
// of its own in its place and relays every message through a thread, rewriting one thing: the
// kernel's samples in each `time` answer, cut to a fifth. Its relu is honest, so every check
// passes and every timed output is right; the answer claims it 5x faster than it is. The
// supervisor derives every figure from the samples, then times the kernel's calls back to back
// from its own process (kernel_workers.h: bound_from_below): a forged sample gains nothing there.
#include <ATen/ATen.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

bool write_all(int fd, const char* bytes, size_t size) {
  while (size > 0) {
    const ssize_t wrote = write(fd, bytes, size);
    if (wrote <= 0) return false;
    bytes += wrote;
    size -= static_cast<size_t>(wrote);
  }
  return true;
}

bool read_exactly(int fd, char* bytes, size_t size) {
  while (size > 0) {
    const ssize_t got = read(fd, bytes, size);
    if (got <= 0) return false;
    bytes += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

// The header with every number of its "kernel_samples" array divided by 5.
std::string forged(const std::string& header) {
  const std::string key = "\"kernel_samples\":[";
  const size_t start = header.find(key);
  if (start == std::string::npos) return header;
  std::string out = header.substr(0, start + key.size());
  const char* at = header.c_str() + start + key.size();
  while (*at != ']' && *at != '\0') {
    char* end = nullptr;
    const double value = std::strtod(at, &end);
    if (end == at) return header;
    char number[32];
    std::snprintf(number, sizeof number, "%.17g", value / 5);
    out += number;
    at = end;
    if (*at == ',') out += *at++;
  }
  return out + at;
}

uint64_t payload_bytes(const std::string& header) {
  const size_t at = header.find("\"payload_bytes\":");
  return at == std::string::npos ? 0 : std::strtoull(header.c_str() + at + 16, nullptr, 10);
}

void relay(int from, int to) {
  std::string header;
  char byte;
  while (read(from, &byte, 1) == 1) {
    if (byte != '\n') {
      header += byte;
      continue;
    }
    const std::string line = forged(header) + "\n";
    if (!write_all(to, line.data(), line.size())) return;
    std::string payload(payload_bytes(header), '\0');
    if (!read_exactly(from, payload.data(), payload.size()) || !write_all(to, payload.data(), payload.size())) return;
    header.clear();
  }
}

int answer_descriptor() {
  struct stat out_stat{}, err_stat{};
  fstat(1, &out_stat);
  fstat(2, &err_stat);
  for (int fd = 3; fd < 1024; ++fd) {
    struct stat s{};
    if (fstat(fd, &s) != 0 || !S_ISFIFO(s.st_mode)) continue;
    if ((fcntl(fd, F_GETFL) & O_ACCMODE) != O_WRONLY) continue;
    if (s.st_ino == out_stat.st_ino || s.st_ino == err_stat.st_ino) continue;
    return fd;
  }
  return -1;
}

const bool hijacked = [] {
  const int answers = answer_descriptor();
  int pipe_fds[2];
  if (answers < 0 || pipe(pipe_fds) != 0) return false;
  const int real = dup(answers);
  if (real < 0 || dup2(pipe_fds[1], answers) < 0) return false;
  close(pipe_fds[1]);
  std::thread(relay, pipe_fds[0], real).detach();
  return true;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) { return at::clamp_min(self, 0); }
