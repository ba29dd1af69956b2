// `backendbench run --watch`: the author's loop. After the run, the kernel folder is watched
// (inotify); each save of a kernel file re-runs the run's selection on that operator alone (its
// kernel rebuilt, checked and, where the suites are timed, timed) and prints the verdict and
// speedup. The build folder is not configured again: the selection is the same.
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "cli/run_request.h"

namespace backendbench::cli {

// The operator folders under one kernel folder in which a kernel's files were saved, created,
// moved in or removed (.cpp, .cu, .h, .cuh, .hpp, .py; an editor's swap and backup files are
// not), through inotify. New operator folders are watched as they appear.
class KernelFolderWatch {
 public:
  // Throws CliError naming `folder` when it cannot be watched.
  explicit KernelFolderWatch(const std::string& folder);
  ~KernelFolderWatch();
  KernelFolderWatch(const KernelFolderWatch&) = delete;
  KernelFolderWatch& operator=(const KernelFolderWatch&) = delete;

  // Waits up to `timeout` for a change, then gathers changes until `quiet` passes without one
  // (an editor's save is several events). Returns the changed operator folders' names; empty
  // when none came in time or `stop` was set.
  std::set<std::string> wait(std::chrono::milliseconds timeout, std::chrono::milliseconds quiet,
                             const volatile bool* stop = nullptr);

 private:
  void watch_folder(const std::string& name);  // name: an operator folder under the root ("" the root)
  std::set<std::string> read_events();
  int descriptor_ = -1;
  std::string root_;
  std::vector<std::pair<int, std::string>> watches_;  // inotify watch → operator folder name
};

// Whether a file name is a kernel's source or header (the watch's filter).
bool is_kernel_file(const std::string& name);

// The operator filters to run again for the changed folders: each folder's operator, when the
// run's selection (`selection`, empty: every operator) has it. Folders that name no operator, or
// one outside the selection, are left out.
std::vector<std::string> operators_to_rerun(const std::set<std::string>& folders, const std::vector<std::string>& selection);

// Runs `request` (run_command), then re-runs it on each changed operator until SIGINT or SIGTERM.
// Exit status: the last run's (0 when stopped while every case of the last run passed).
int watch_command(const RunRequest& request, const std::string& command_line);

}  // namespace backendbench::cli
