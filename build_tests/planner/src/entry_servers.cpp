// The supervisors kept for a run's correctness phase; see entry_servers.h.
#include "planner/entry_servers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
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

#include "language/json_text.h"
#include "planner/gpu_files.h"
#include "planner/process.h"
#include "language/job.h"

namespace backendbench::planner {
namespace {

// "backendbench-<pid>-<random>": another run's sockets, or a stale name, are never this run's.
std::string new_prefix() {
  std::random_device random;
  char text[64];
  std::snprintf(text, sizeof(text), "backendbench-%d-%08x%08x", static_cast<int>(getpid()), random(), random());
  return text;
}

// What the executable at `path` is: its file, size and modification time ("" when missing). A
// server whose executable's stamp changed (the build linked it again) runs an old program.
std::string stamp_of(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return "";
  return std::to_string(status.st_dev) + ":" + std::to_string(status.st_ino) + ":" + std::to_string(status.st_size) + ":" +
         std::to_string(status.st_mtim.tv_sec) + "." + std::to_string(status.st_mtim.tv_nsec);
}

std::vector<std::string> gpus_of(const EntryServers::Plan& plan) {
  return plan.gpus.empty() ? std::vector<std::string>{"cpu"} : plan.gpus;
}

// The device file a server of `gpu` alone sees; "" where it sees every GPU's.
std::string gpu_file_of(const EntryServers::Plan& plan, const std::string& gpu) {
  if (plan.bubblewrap.empty() || plan.gpu_files.size() != plan.gpus.size()) return "";
  for (size_t i = 0; i < plan.gpus.size(); ++i) {
    if (plan.gpus[i] == gpu) return plan.gpu_files[i];
  }
  return "";
}

}  // namespace

EntryServers::EntryServers(const Plan& plan) : plan_(plan), prefix_(new_prefix()) { extend(plan); }

void EntryServers::start(const Executable& served, const std::string& gpu, int slot) {
  std::map<std::string, std::string> extra = plan_.environment;
  if (gpu != "cpu") {
    // The allocation CTest would give an entry of this GPU: the server binds to it as one.
    extra["CTEST_RESOURCE_GROUP_COUNT"] = "1";
    extra["CTEST_RESOURCE_GROUP_0"] = "gpus";
    extra["CTEST_RESOURCE_GROUP_0_GPUS"] = "id:" + gpu + ",slots:1";
  }
  std::vector<std::string> argv;
  if (const std::string file = gpu_file_of(plan_, gpu); !file.empty()) {
    // Its GPU alone, as CUDA's device 0 (gpu_slot.h); everything else as it is, its
    // shared memory included (its workers build their own sandboxes from this view).
    argv = {plan_.bubblewrap, "--dev-bind", "/", "/", "--dev", "/dev", "--dev-bind", "/dev/shm", "/dev/shm"};
    for (const std::string& shared : shared_gpu_files()) argv.insert(argv.end(), {"--dev-bind", shared, shared});
    argv.insert(argv.end(), {"--dev-bind", file, file, "--die-with-parent", "--"});
    extra["BACKENDBENCH_ONE_GPU_FILE"] = "1";
  }
  argv.insert(argv.end(), {served.path, "--backendbench_listen=" + served_entry_address(prefix_, served.path, gpu, slot)});
  if (served.spares && !plan_.kernel_root.empty()) argv.push_back("--backendbench_serve=" + plan_.kernel_root);
  Server server;
  server.executable = served.path;
  server.gpu = gpu;
  server.spares = served.spares;
  server.stamp = stamp_of(served.path);
  const int log = ::open(plan_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  try {
    // It ends when its input does: when this object stops it, or this process dies.
    const PipedChild child = start_piped(argv, extra, log);
    server.pid = child.pid, server.to = child.to, server.from = child.from;
  } catch (const std::exception&) {
    // None: the entries that find no server run their executables themselves.
  }
  if (log >= 0) ::close(log);
  if (server.pid >= 0) servers_.push_back(server);
}

bool EntryServers::covers(const Plan& plan) const {
  if (gpus_of(plan) != gpus_of(plan_) || plan.kernel_root != plan_.kernel_root || plan.environment != plan_.environment ||
      plan.gpu_files != plan_.gpu_files || plan.bubblewrap != plan_.bubblewrap) {
    return false;
  }
  for (const Executable& wanted : plan.executables) {
    for (const Server& server : servers_) {
      if (server.executable != wanted.path) continue;
      // (A server found ended is reaped here; the destructor then has nothing to wait for.)
      int status = 0;
      if ((wanted.spares && !server.spares) || server.stamp != stamp_of(server.executable) || server.to < 0 ||
          waitpid(server.pid, &status, WNOHANG) != 0) {
        return false;
      }
    }
  }
  return true;
}

void EntryServers::extend(const Plan& plan) {
  for (const Executable& wanted : plan.executables) {
    for (const std::string& gpu : gpus_of(plan_)) {
      int running = 0;
      for (const Server& server : servers_) running += server.executable == wanted.path && server.gpu == gpu;
      for (int k = running; k < wanted.per_gpu && k < kMostServedEntrySlots; ++k) start(wanted, gpu, k);
    }
  }
}

int EntryServers::wait_until_listening(double ready_seconds) {
  // Each says {"listening": ...} on its output once its socket is bound.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(ready_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<pollfd> polled;
    std::vector<size_t> which;
    for (size_t i = 0; i < servers_.size(); ++i) {
      if (servers_[i].answered || servers_[i].from < 0) continue;
      polled.push_back({servers_[i].from, POLLIN, 0});
      which.push_back(i);
    }
    if (polled.empty()) break;
    const int left_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (::poll(polled.data(), polled.size(), std::max(1, left_ms)) <= 0) continue;
    for (size_t p = 0; p < polled.size(); ++p) {
      if (!(polled[p].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Server& server = servers_[which[p]];
      char buffer[1024];
      const ssize_t got = ::read(server.from, buffer, sizeof(buffer));
      if (got > 0) server.output.append(buffer, static_cast<size_t>(got));
      const size_t end = server.output.find('\n');
      if (got <= 0 || end != std::string::npos) {
        server.answered = true;
        const nlohmann::json line =
            end == std::string::npos ? nlohmann::json() : json_text::parse_or_discarded(server.output.substr(0, end));
        if (line.is_object() && line.contains("listening")) ++listening_;
      }
    }
  }
  for (Server& server : servers_) server.answered = true;  // one still silent is not waited for again
  return listening_;
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

}  // namespace backendbench::planner
