// `backendbench run --watch`: the author's loop. After the run, the kernel folder is watched
// (inotify); each save of a kernel file first gets a quick verdict (the saved file alone, built in
// a candidate slot and checked by a served test executable, as the reward API checks a candidate:
// about a second and a half on two cores), then re-runs the run's selection on that operator alone
// (its kernels rebuilt, checked and, where the suites are timed, timed), which prints the verdict
// and speedup and rewrites the results folder. A save whose every saved file does not compile gets
// its quick verdict (the compiler's first error) and no full run, which would configure the build
// folder twice to say the same. The build folder is not configured again: the selection is the
// same.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agents/kernel_prompt.h"
#include "agents/reward.h"
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
  // The kernel files the last wait saw touched (saved, created, moved in or out, removed), as
  // "<operator folder>/<file>"; a new operator folder's files among them.
  const std::set<std::string>& touched_files() const { return touched_; }

 private:
  void watch_folder(const std::string& name);  // name: an operator folder under the root ("" the root)
  std::set<std::string> read_events();
  int descriptor_ = -1;
  std::string root_;
  std::vector<std::pair<int, std::string>> watches_;  // inotify watch → operator folder name
  std::set<std::string> touched_;
};

// A saved kernel file that gets a quick verdict before its operator's full run.
struct QuickCheck {
  std::string op;      // the operator's display name (relu.default)
  agents::KernelLanguage language = agents::KernelLanguage::kCpp;
  std::string file;    // "<operator folder>/<file>", as touched
  std::string path;    // absolute
  // The headers written beside it in the candidate's kernel folder (RewardCandidate::beside): every
  // header of the kernel folder's root, there and in the operator's folder, and of the operator's
  // folder; only for a kernel that includes one by a quoted #include.
  std::map<std::string, std::string> beside;
};

// The touched files (KernelFolderWatch::touched_files) that can be checked alone: an existing
// kernel file (<folder>_implementation_<N>.cpp, .cu, .py) of an operator in the selection whose
// quoted #includes each name a header of its own folder or of the kernel folder's root (`name.h`,
// or `../name.h` for the root), which are then written beside it. Left out, for the full run alone:
// headers, removed files, kernels including anything else by quotes, CUDA kernels where `cuda` is
// false, Python kernels where `python` is false.
std::vector<QuickCheck> quick_checks(const std::string& kernel_root, const std::set<std::string>& touched,
                                     const std::vector<std::string>& selection, bool cuda, bool python);

// One line of the console for a quick check's reward: "verdict <file>: correct ...", "... WRONG
// ...", "... does not build: ..." (with the compiler's next lines under it), "... not checked: ...".
std::string quick_verdict_text(const QuickCheck& check, const agents::Reward& reward);

// Whether a file name is a kernel's source or header (the watch's filter).
bool is_kernel_file(const std::string& name);

// The operator filters to run again for the changed folders: each folder's operator, when the
// run's selection (`selection`, empty: every operator) has it. Folders that name no operator, or
// one outside the selection, are left out.
std::vector<std::string> operators_to_rerun(const std::set<std::string>& folders, const std::vector<std::string>& selection);

// Runs `request` (run_command), then re-runs it on each changed operator until SIGINT or SIGTERM.
// Exit status: the last round's (0 when stopped while every case of the last run passed; 1 after a
// save that did not compile).
int watch_command(const RunRequest& request, const std::string& command_line);

}  // namespace backendbench::cli
