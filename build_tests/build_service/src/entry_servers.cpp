// The supervisors kept for a run's correctness phase; see entry_servers.h.
#include "build_service/entry_servers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>

#include "build_service/process.h"
#include "language/job.h"

namespace backendbench::build {
namespace {

// "backendbench-<pid>-<random>": another run's sockets, or a stale name, are never this run's.
std::string new_prefix() {
  std::random_device random;
  char text[64];
  std::snprintf(text, sizeof(text), "backendbench-%d-%08x%08x", static_cast<int>(getpid()), random(), random());
  return text;
}

}  // namespace

EntryServers::EntryServers(const Plan& plan, double ready_seconds) : prefix_(new_prefix()) {
  const std::vector<std::string> gpus = plan.gpus.empty() ? std::vector<std::string>{"cpu"} : plan.gpus;
  const int log = ::open(plan.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  for (const Executable& served : plan.executables) {
    const std::string& executable = served.path;
    for (const std::string& gpu : gpus) {
      std::map<std::string, std::string> extra = plan.environment;
      if (gpu != "cpu") {
        // The allocation CTest would give an entry of this GPU: the server binds to it as one.
        extra["CTEST_RESOURCE_GROUP_COUNT"] = "1";
        extra["CTEST_RESOURCE_GROUP_0"] = "gpus";
        extra["CTEST_RESOURCE_GROUP_0_GPUS"] = "id:" + gpu + ",slots:1";
      }
      for (int k = 0; k < served.per_gpu && k < kMostServedEntrySlots; ++k) {
        std::vector<std::string> argv = {executable,
                                         "--backendbench_listen=" + served_entry_address(prefix_, executable, gpu, k)};
        if (served.spares && !plan.kernel_root.empty()) argv.push_back("--backendbench_serve=" + plan.kernel_root);
        // It ends when its input does: when this object stops it, or this process dies.
        PipedChild child;
        try {
          child = start_piped(argv, extra, log);
        } catch (const std::exception&) {
          break;  // fewer servers: the entries that find none run their executables themselves
        }
        servers_.push_back({child.pid, child.to, child.from});
      }
    }
  }
  if (log >= 0) ::close(log);

  // Each says {"listening": ...} on its output once its socket is bound.
  std::vector<std::string> output(servers_.size());
  std::vector<bool> done(servers_.size(), false);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(ready_seconds);
  for (size_t waiting = servers_.size(); waiting > 0 && std::chrono::steady_clock::now() < deadline;) {
    std::vector<pollfd> polled;
    std::vector<size_t> which;
    for (size_t i = 0; i < servers_.size(); ++i) {
      if (done[i]) continue;
      polled.push_back({servers_[i].from, POLLIN, 0});
      which.push_back(i);
    }
    const int left_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (::poll(polled.data(), polled.size(), std::max(1, left_ms)) <= 0) continue;
    for (size_t p = 0; p < polled.size(); ++p) {
      if (!(polled[p].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const size_t i = which[p];
      char buffer[1024];
      const ssize_t got = ::read(servers_[i].from, buffer, sizeof(buffer));
      if (got > 0) output[i].append(buffer, static_cast<size_t>(got));
      const size_t end = output[i].find('\n');
      if (got <= 0 || end != std::string::npos) {
        done[i] = true;
        --waiting;
        const nlohmann::json line =
            end == std::string::npos ? nlohmann::json() : nlohmann::json::parse(output[i].substr(0, end), nullptr, false);
        if (line.is_object() && line.contains("listening")) ++listening_;
      }
    }
  }
}

void EntryServers::close() {
  for (Server& server : servers_) {
    if (server.to >= 0) ::close(server.to);
    if (server.from >= 0) ::close(server.from);
    server.to = server.from = -1;
  }
}

EntryServers::~EntryServers() {
  // Each ends by itself once its input is closed, removing its workers' scratch folders; one
  // still there after the grace is killed.
  close();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (Server& server : servers_) {
    int status = 0;
    while (waitpid(server.pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(server.pid, SIGKILL);
        waitpid(server.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  servers_.clear();
}

}  // namespace backendbench::build
