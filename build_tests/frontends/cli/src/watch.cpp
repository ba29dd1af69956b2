// The author's loop: a kernel folder watched, each saved operator run again; see watch.h.
#include "cli/watch.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>

#include "planner/build_tree.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "language/naming.h"
#include "planner/interruption.h"
#include "planner/process.h"

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
            if (!is_kernel_file(item.path().filename().string())) continue;
            changed.insert(name);
            touched_.insert(name + "/" + item.path().filename().string());
          }
        } else if ((event->mask & IN_ISDIR) && (event->mask & IN_DELETE)) {
          changed.insert(name);
        }
      } else if (!(event->mask & IN_ISDIR) && is_kernel_file(name)) {
        changed.insert(watch->second);
        touched_.insert(watch->second + "/" + name);
      }
    }
  }
  return changed;
}

std::set<std::string> KernelFolderWatch::wait(std::chrono::milliseconds timeout, std::chrono::milliseconds quiet,
                                               const volatile bool* stop) {
  std::set<std::string> changed;
  touched_.clear();
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

namespace {

bool is_header(const std::string& name) {
  return ends_with(name, ".h") || ends_with(name, ".cuh") || ends_with(name, ".hpp");
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A regular file that is not a link: a link is followed here, in this process, but not by the
// sandbox of the folder's own build, where what it names (a key under $HOME, say) is not bound.
bool plain_file(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::symlink_status(path, error).type() == std::filesystem::file_type::regular;
}

// The headers (.h, .cuh, .hpp) directly in `folder` that are plain files, by name.
std::map<std::string, std::string> headers_in(const std::string& folder) {
  std::map<std::string, std::string> headers;
  std::error_code error;
  for (const auto& item : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = item.path().filename().string();
    if (plain_file(item.path()) && is_header(name)) headers[name] = text_of(item.path().string());
  }
  return headers;
}

// The file a line's quoted include names (`#include "name"`, blanks allowed around the `#` and
// after it), if it has one. By hand, not std::regex: <regex> took a second of this room's build.
std::optional<std::string> quoted_include(const std::string& line) {
  size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line[at] != '#') return std::nullopt;
  at = line.find_first_not_of(" \t", at + 1);
  constexpr std::string_view kInclude = "include";
  if (at == std::string::npos || line.compare(at, kInclude.size(), kInclude) != 0) return std::nullopt;
  at = line.find_first_not_of(" \t", at + kInclude.size());
  if (at == std::string::npos || line[at] != '"') return std::nullopt;
  const size_t end = line.find('"', at + 1);
  if (end == std::string::npos) return std::nullopt;
  return line.substr(at + 1, end - at - 1);
}

}  // namespace

std::vector<QuickCheck> quick_checks(const std::string& kernel_root, const std::set<std::string>& touched,
                                     const std::vector<std::string>& selection, bool cuda, bool python) {
  std::vector<QuickCheck> checks;
  std::optional<std::map<std::string, std::string>> root;  // the root's headers, read once when needed
  for (const std::string& file : touched) {
    const size_t slash = file.find('/');
    if (slash == std::string::npos || file.find('/', slash + 1) != std::string::npos) continue;
    const std::string folder = file.substr(0, slash);
    const std::filesystem::path name(file.substr(slash + 1));
    const std::vector<std::string> op = operators_to_rerun({folder}, selection);
    if (op.empty() || !naming::implementation_number(folder, name.stem().string())) continue;
    QuickCheck check{op.front(), agents::KernelLanguage::kCpp, file, kernel_root + "/" + file};
    const std::string extension = name.extension().string();
    if (extension == ".cu") {
      if (!cuda) continue;
      check.language = agents::KernelLanguage::kCuda;
    } else if (extension == ".py") {
      if (!python) continue;
      check.language = agents::KernelLanguage::kPython;
    } else if (extension != ".cpp") {
      continue;
    }
    // Removed (the full run says what that means), or a link (plain_file).
    if (!plain_file(check.path)) continue;
    if (check.language != agents::KernelLanguage::kPython) {
      std::set<std::string> included;
      std::ifstream in(check.path);
      for (std::string line; std::getline(in, line);) {
        if (std::optional<std::string> name = quoted_include(line)) included.insert(*name);
      }
      if (!included.empty()) {
        // As the kernel folder's build finds them: its own folder first, then the root (-I).
        if (!root) root = headers_in(kernel_root);
        const std::map<std::string, std::string> own = headers_in(kernel_root + "/" + folder);
        const auto found = [&](const std::string& name) {
          if (name.rfind("../", 0) == 0) return root->count(name.substr(3)) > 0;
          return own.count(name) > 0 || root->count(name) > 0;
        };
        if (!std::all_of(included.begin(), included.end(), found)) continue;
        for (const auto& [name, text] : *root) {
          check.beside[name] = text;
          check.beside[folder + "/" + name] = text;
        }
        for (const auto& [name, text] : own) check.beside[folder + "/" + name] = text;
      }
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

std::string quick_verdict_text(const QuickCheck& check, const agents::Reward& reward) {
  char seconds[96];
  std::snprintf(seconds, sizeof(seconds), " (%.2f s: build %.2f s, check %.2f s)", reward.seconds, reward.build_seconds,
                reward.check_seconds);
  std::ostringstream text;
  text << "verdict " << check.file << ": ";
  const int cases = reward.passed + reward.failed + reward.skipped;
  if (reward.outcome == "passed") {
    text << "correct on " << reward.passed << " case" << (reward.passed == 1 ? "" : "s");
    if (reward.skipped > 0) text << " (" << reward.skipped << " skipped)";
    text << seconds;
  } else if (reward.outcome == "failed" && reward.failed == 0) {
    text << "no verdict: " << reward.reason << seconds;  // every case skipped
  } else if (reward.outcome == "failed") {
    text << "WRONG on " << reward.failed << " of " << cases << " cases" << seconds;
    if (!reward.failed_case.empty()) text << "\n  first: " << reward.failed_case;
    if (!reward.reason.empty()) text << "\n  " << reward.reason;
  } else if (reward.outcome == "build_failed") {
    text << "does not build" << seconds;
    const size_t shown = std::min<size_t>(reward.build_errors.size(), 6);
    for (size_t i = 0; i < shown; ++i) text << "\n  " << reward.build_errors[i];
    if (shown == 0) text << "\n  " << reward.reason;
  } else {
    text << "not checked: " << reward.reason;
  }
  return text.str();
}

namespace {

// The quick verdicts' service: a reward service (agents/reward.h) on the run's build folder, one
// candidate at a time, untimed, every case of the operator in the run's suites with one salt, the
// run's sandbox. Its candidate slots and served test executables are the run's build folder's;
// they build and start before the first save (start_quick_checks), never while a run builds.
class QuickChecker {
 public:
  QuickChecker(const RunRequest& request, uint64_t salt) : service_(options_for(request, salt)) {}

  agents::Reward check(const QuickCheck& check) {
    agents::RewardCandidate candidate;
    candidate.op = check.op;
    candidate.language = check.language;
    candidate.source = text_of(check.path);
    candidate.beside = check.beside;
    return service_.score(candidate);
  }

 private:
  static agents::RewardOptions options_for(const RunRequest& request, uint64_t salt) {
    const Installation where = installation();
    std::vector<std::string> suites;
    for (const SuiteChoice& suite : request.suites) suites.push_back(suite.name);
    agents::RewardOptions options{planner::BuildTree(where.source_directory, request.build), suites, {}, request.device, salt};
    options.concurrency = 1;
    options.sandbox = request.sandbox;
    options.work_directory = request.build + "/backendbench_watch";
    options.templates_directory = where.templates_directory;
    return options;
  }

  agents::RewardService service_;
};

using planner::seconds_since;

// The quick verdicts, started after the first run: its slots built and a served test executable
// started by checking one kernel of the selection (the first the folder has). nullptr, with a
// line saying why, when they cannot start: the full runs go on alone.
std::unique_ptr<QuickChecker> start_quick_checks(const RunRequest& request, bool cuda, bool python) {
  const auto start = std::chrono::steady_clock::now();
  const uint64_t salt = run_salt(request);
  std::unique_ptr<QuickChecker> checker;
  try {
    checker = std::make_unique<QuickChecker>(request, salt);
    std::set<std::string> every_file;
    std::error_code error;
    for (const auto& folder : std::filesystem::directory_iterator(request.kernels_directory, error)) {
      if (!folder.is_directory()) continue;
      for (const auto& file : std::filesystem::directory_iterator(folder.path(), error)) {
        every_file.insert(folder.path().filename().string() + "/" + file.path().filename().string());
      }
    }
    std::vector<QuickCheck> candidates = quick_checks(request.kernels_directory, every_file, request.ops, cuda, python);
    // A C++ kernel first: its slots are the ones an author's save most likely needs.
    std::stable_partition(candidates.begin(), candidates.end(),
                          [](const QuickCheck& check) { return check.language == agents::KernelLanguage::kCpp; });
    if (!candidates.empty()) {
      // Not checked (its slots did not build, say): each save says so too, and its full run follows.
      const agents::Reward reward = checker->check(candidates.front());
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.1f", seconds_since(start));
      std::cout << "quick verdicts ready in " << seconds << " s (warmed up on " << candidates.front().file << ": "
                << (reward.outcome == "error" ? "not checked: " + reward.reason : reward.outcome) << ")\n";
    }
  } catch (const std::exception& error) {
    std::cout << "no quick verdicts (each save gets the full run alone): " << error.what() << "\n";
    return nullptr;
  }
  return checker;
}

}  // namespace

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
  // Ctrl-C during the run itself reaches the run's own watch (planner/interruption.h), not ours.
  if (status == planner::kInterruptedStatus) stop_requested = true;
  const RunContext context = run_context(installation());
  std::unique_ptr<QuickChecker> quick = stop_requested ? nullptr : start_quick_checks(request, context.cuda_available, context.python_kernels);
  while (!stop_requested) {
    std::cout << "\nwatching " << request.kernels_directory << " for saved kernels (Ctrl-C stops)\n" << std::flush;
    std::set<std::string> changed;
    while (changed.empty() && !stop_requested) {
      changed = watch.wait(std::chrono::hours(1), std::chrono::milliseconds(100), &stop_requested);
    }
    if (stop_requested) break;
    const std::vector<std::string> operators = operators_to_rerun(changed, request.ops);
    if (operators.empty()) {
      std::cout << "changed: " << *changed.begin() << (changed.size() > 1 ? " and more" : "")
                << "; no operator of the run's selection\n";
      continue;
    }
    if (quick) {
      // The saved files alone first, in about a second and a half; the full run after them is the
      // results folder's, and the speedup's.
      const std::vector<QuickCheck> checks =
          quick_checks(request.kernels_directory, watch.touched_files(), request.ops, context.cuda_available, context.python_kernels);
      size_t not_built = 0;
      for (const QuickCheck& check : checks) {
        const agents::Reward reward = quick->check(check);
        std::cout << quick_verdict_text(check, reward) << "\n" << std::flush;
        // Only a kernel built exactly as its folder builds it counts: one with headers beside it
        // might fail for a way of including that the slot does not copy.
        if (reward.outcome == "build_failed" && check.beside.empty()) ++not_built;
      }
      // Every file saved in the selection does not compile: the full run would say the same, after
      // a build. Its results stay the last run's.
      size_t touched_in_selection = 0;
      for (const std::string& file : watch.touched_files()) {
        if (!operators_to_rerun({file.substr(0, file.find('/'))}, request.ops).empty()) ++touched_in_selection;
      }
      if (not_built > 0 && not_built == checks.size() && checks.size() == touched_in_selection) {
        std::cout << "not run again: it does not compile (the results folder keeps the last run's)\n" << std::flush;
        status = 1;
        continue;
      }
    }
    std::string names;
    for (const std::string& op : operators) names += (names.empty() ? "" : ", ") + op;
    std::cout << "changed: " << names << "; running it again\n" << std::flush;
    RunRequest again = request;
    again.ops = operators;
    try {
      status = run_command(again, command_line);
      if (status == planner::kInterruptedStatus) stop_requested = true;
    } catch (const DiagnosticError& error) {
      std::cerr << error.what() << "\n";  // one round's error (say, a kernel folder now empty): the loop goes on
      status = 2;
    }
  }
  std::cout << "\nstopped watching\n";
  return status;
}

}  // namespace backendbench::cli
