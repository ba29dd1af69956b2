// The author's loop: a kernel folder watched, each saved operator run again; see watch.h.
#include "cli/watch.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/errors.h"
#include "language/naming.h"

namespace backendbench::cli {

namespace {

constexpr uint32_t kFileEvents = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE;

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

volatile bool stop_requested = false;
void request_stop(int) { stop_requested = true; }

}  // namespace

bool is_kernel_file(const std::string& name) {
  if (name.empty() || name[0] == '.' || name[0] == '#') return false;  // .relu.cpp.swp, emacs' #relu.cpp#
  for (const char* extension : {".cpp", ".cu", ".h", ".cuh", ".hpp", ".py"}) {
    if (ends_with(name, extension)) return true;
  }
  return false;
}

KernelFolderWatch::KernelFolderWatch(const std::string& folder) : root_(folder) {
  descriptor_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (descriptor_ < 0) {
    throw CliError("--watch", std::string("cannot watch files: inotify_init1: ") + std::strerror(errno),
                   "a Linux kernel with inotify and a free inotify instance (fs.inotify.max_user_instances)");
  }
  watch_folder("");
  std::error_code error;
  for (const auto& item : std::filesystem::directory_iterator(root_, error)) {
    if (item.is_directory()) watch_folder(item.path().filename().string());
  }
}

KernelFolderWatch::~KernelFolderWatch() {
  if (descriptor_ >= 0) close(descriptor_);
}

void KernelFolderWatch::watch_folder(const std::string& name) {
  const std::string path = name.empty() ? root_ : root_ + "/" + name;
  const uint32_t events = name.empty() ? (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_ONLYDIR) : kFileEvents;
  const int watch = inotify_add_watch(descriptor_, path.c_str(), events);
  if (watch < 0) {
    throw CliError(path, std::string("cannot watch this folder: ") + std::strerror(errno),
                   "a readable folder, and inotify watches to spare (fs.inotify.max_user_watches)");
  }
  watches_.emplace_back(watch, name);
}

std::set<std::string> KernelFolderWatch::read_events() {
  std::set<std::string> changed;
  alignas(inotify_event) char buffer[16384];
  for (;;) {
    const ssize_t length = read(descriptor_, buffer, sizeof(buffer));
    if (length <= 0) break;
    for (ssize_t offset = 0; offset < length;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
      offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      const std::string name = event->len ? std::string(event->name) : std::string();
      const auto watch = std::find_if(watches_.begin(), watches_.end(), [&](const auto& item) { return item.first == event->wd; });
      if (watch == watches_.end()) continue;
      if (watch->second.empty()) {
        // The root: a new operator folder (watched from now on; a file already in it counts).
        if ((event->mask & IN_ISDIR) && (event->mask & (IN_CREATE | IN_MOVED_TO))) {
          watch_folder(name);
          std::error_code error;
          for (const auto& item : std::filesystem::directory_iterator(root_ + "/" + name, error)) {
            if (is_kernel_file(item.path().filename().string())) changed.insert(name);
          }
        } else if ((event->mask & IN_ISDIR) && (event->mask & IN_DELETE)) {
          changed.insert(name);
        }
      } else if (!(event->mask & IN_ISDIR) && is_kernel_file(name)) {
        changed.insert(watch->second);
      }
    }
  }
  return changed;
}

std::set<std::string> KernelFolderWatch::wait(std::chrono::milliseconds timeout, std::chrono::milliseconds quiet,
                                               const volatile bool* stop) {
  std::set<std::string> changed;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (changed.empty()) {
    if (stop != nullptr && *stop) return {};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return {};
    pollfd ready{descriptor_, POLLIN, 0};
    // In slices, so that a stop request is seen within 200 ms.
    if (poll(&ready, 1, static_cast<int>(std::min<int64_t>(left.count(), 200))) > 0) changed = read_events();
  }
  // The rest of the save: more events until `quiet` passes without one.
  for (;;) {
    if (stop != nullptr && *stop) return {};
    pollfd ready{descriptor_, POLLIN, 0};
    if (poll(&ready, 1, static_cast<int>(quiet.count())) <= 0) break;
    for (const std::string& name : read_events()) changed.insert(name);
  }
  return changed;
}

std::vector<std::string> operators_to_rerun(const std::set<std::string>& folders, const std::vector<std::string>& selection) {
  std::set<std::string> operators;
  for (const std::string& folder : folders) {
    const auto op = naming::OperatorName::from_folder(folder);
    if (!op) continue;
    bool wanted = selection.empty();
    for (const std::string& filter : selection) wanted = wanted || naming::matches_filter(*op, filter);
    if (wanted) operators.insert(op->display());
  }
  return {operators.begin(), operators.end()};
}

int watch_command(const RunRequest& request, const std::string& command_line) {
  if (request.kernels_directory.empty() || request.generation) {
    throw CliError("--watch", "nothing to watch: no kernel folder among the backends",
                   "--backend directory or a kernel folder of your own (not llm or kernel_agent)");
  }
  if (request.slurm) throw CliError("--watch", "--watch with --slurm", "one of them: the loop runs here");
  // Watched before the first run, so that a save during it is not missed.
  KernelFolderWatch watch(request.kernels_directory);
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  int status = run_command(request, command_line);
  while (!stop_requested) {
    std::cout << "\nwatching " << request.kernels_directory << " for saved kernels (Ctrl-C stops)\n" << std::flush;
    std::set<std::string> changed;
    while (changed.empty() && !stop_requested) {
      changed = watch.wait(std::chrono::hours(1), std::chrono::milliseconds(300), &stop_requested);
    }
    if (stop_requested) break;
    const std::vector<std::string> operators = operators_to_rerun(changed, request.ops);
    if (operators.empty()) {
      std::cout << "changed: " << *changed.begin() << (changed.size() > 1 ? " and more" : "")
                << "; no operator of the run's selection\n";
      continue;
    }
    std::string names;
    for (const std::string& op : operators) names += (names.empty() ? "" : ", ") + op;
    std::cout << "changed: " << names << "; running it again\n" << std::flush;
    RunRequest again = request;
    again.ops = operators;
    try {
      status = run_command(again, command_line);
    } catch (const DiagnosticError& error) {
      std::cerr << error.what() << "\n";  // one round's error (say, a kernel folder now empty): the loop goes on
      status = 2;
    }
  }
  std::cout << "\nstopped watching\n";
  return status;
}

}  // namespace backendbench::cli
