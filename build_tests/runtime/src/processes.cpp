// Processes seen from outside, in /proc (processes.h).
#include "backendbench/processes.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace backendbench::processes {
namespace {

double ticks_per_second() {
  static const double ticks = [] {
    const long value = sysconf(_SC_CLK_TCK);
    return value > 0 ? static_cast<double>(value) : 100.0;
  }();
  return ticks;
}

// The fields of /proc/<pid>[/task/<tid>]/stat after the command name (which may hold spaces and
// parentheses: it ends at the last ')'), the state first; empty when it cannot be read.
std::vector<std::string> stat_fields(const std::string& path) {
  std::ifstream file(path);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return {};
  std::istringstream rest(text.substr(name_end + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

std::vector<pid_t> numbered_entries(const std::string& folder) {
  std::vector<pid_t> numbers;
  DIR* dir = opendir(folder.c_str());
  if (dir == nullptr) return numbers;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long number = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && number > 0) numbers.push_back(static_cast<pid_t>(number));
  }
  closedir(dir);
  return numbers;
}

// The children of `pid`, each of its threads' (a thread that forks is their parent).
std::vector<pid_t> children_of(pid_t pid, bool& readable) {
  std::vector<pid_t> children;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  for (const pid_t tid : numbered_entries(task)) {
    std::ifstream file(task + "/" + std::to_string(tid) + "/children");
    if (!file) {
      readable = false;
      continue;
    }
    for (pid_t child; file >> child;) children.push_back(child);
  }
  return children;
}

// Without /proc/<pid>/task/<tid>/children (a kernel built without CONFIG_PROC_CHILDREN): every
// process's parent, from its stat.
std::vector<pid_t> tree_by_parents(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (const pid_t pid : numbered_entries("/proc")) {
    const std::vector<std::string> fields = stat_fields("/proc/" + std::to_string(pid) + "/stat");
    if (fields.size() > 1) children.emplace(static_cast<pid_t>(std::stol(fields[1])), pid);
  }
  std::vector<pid_t> tree = {root};
  for (size_t i = 0; i < tree.size(); ++i) {
    const auto [first, last] = children.equal_range(tree[i]);
    for (auto it = first; it != last; ++it) tree.push_back(it->second);
  }
  return tree;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double own_process_user_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec) + static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
}

std::vector<pid_t> trees_of(const std::vector<pid_t>& roots) {
  std::vector<pid_t> all;
  for (const pid_t root : roots) {
    for (const pid_t pid : tree_of(root)) all.push_back(pid);
  }
  return all;
}

}  // namespace

std::vector<pid_t> tree_of(pid_t root) {
  if (root <= 0 || state_of(root) == '\0') return {};
  std::vector<pid_t> tree = {root};
  std::set<pid_t> seen = {root};
  bool readable = true;
  for (size_t i = 0; i < tree.size(); ++i) {
    for (const pid_t child : children_of(tree[i], readable)) {
      if (seen.insert(child).second) tree.push_back(child);
    }
    if (!readable) return tree_by_parents(root);
  }
  return tree;
}

char state_of(pid_t pid) {
  const std::vector<std::string> fields = stat_fields("/proc/" + std::to_string(pid) + "/stat");
  return fields.empty() || fields[0].empty() ? '\0' : fields[0][0];
}

double cpu_seconds_of(const std::vector<pid_t>& pids, bool user_only) {
  double ticks = 0;
  for (const pid_t pid : pids) {
    // utime and stime, the 14th and 15th fields of stat (the 12th and 13th after the name).
    const std::vector<std::string> fields = stat_fields("/proc/" + std::to_string(pid) + "/stat");
    if (fields.size() > 12) ticks += std::stod(fields[11]) + (user_only ? 0.0 : std::stod(fields[12]));
  }
  return ticks / ticks_per_second();
}

MachineTime machine_time() {
  std::ifstream file("/proc/stat");
  std::string label;
  file >> label;
  MachineTime time;
  if (label != "cpu") return time;
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  double fields[8] = {};
  for (double& field : fields) file >> field;
  const double busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7];
  time.busy = busy / ticks_per_second();
  time.all = (busy + fields[3] + fields[4]) / ticks_per_second();
  time.user = (fields[0] + fields[1] + fields[7]) / ticks_per_second();
  return time;
}

double cpu_stall_microseconds() {
  std::ifstream file("/proc/pressure/cpu");
  for (std::string word; file >> word;) {
    if (word.rfind("total=", 0) == 0) return std::stod(word.substr(6));  // the first line's: "some"
  }
  return -1;
}

LoadMeter::LoadMeter(std::vector<pid_t> own_roots) : roots_(std::move(own_roots)) {
  own_seconds_ = cpu_seconds_of(trees_of(roots_), /*user_only=*/true) + own_process_user_seconds();
  machine_ = machine_time();
  stalled_us_ = cpu_stall_microseconds();
  started_ = now_seconds();
}

double LoadMeter::seconds_since_start() const { return now_seconds() - started_; }

double LoadMeter::other_cores() const {
  const double wall = seconds_since_start();
  const MachineTime machine = machine_time();
  const double own = cpu_seconds_of(trees_of(roots_), /*user_only=*/true) + own_process_user_seconds() - own_seconds_;
  if (!(wall >= kShortestLoadSeconds)) return -1;
  return std::max(0.0, (machine.user - machine_.user - own) / wall);
}

double LoadMeter::waited_share() const {
  const double wall = seconds_since_start();
  const double stalled = cpu_stall_microseconds();
  if (stalled_us_ < 0 || stalled < 0 || !(wall > 0)) return -1;
  return std::clamp((stalled - stalled_us_) / 1e6 / wall, 0.0, 1.0);
}

Stopped::Stopped(const std::vector<pid_t>& roots) : roots_(roots) {
  // Until a walk of the trees finds no process not yet stopped: one may have started a child
  // between the walk that found it and its stop (a few rounds at most; a kernel forking without
  // end is stopped as far as it got).
  std::set<pid_t> stopped;
  for (int round = 0; round < 8; ++round) {
    bool more = false;
    for (const pid_t pid : trees_of(roots)) {
      if (!stopped.insert(pid).second) continue;
      if (kill(pid, SIGSTOP) == 0) stopped_.push_back(pid);
      more = true;
    }
    // A stop takes effect when each of the process's threads next leaves the kernel: a sleeping
    // one stops as it wakes, before it runs any code of its own; a running one (a spinning
    // thread) at once, by an interrupt. Those running are waited for, so that none runs on when
    // this returns.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    for (const pid_t pid : stopped_) {
      const std::string task = "/proc/" + std::to_string(pid) + "/task/";
      for (const pid_t tid : numbered_entries(task)) {
        const std::string stat = task + std::to_string(tid) + "/stat";
        for (std::vector<std::string> fields = stat_fields(stat);
             !fields.empty() && fields[0] == "R" && std::chrono::steady_clock::now() < give_up; fields = stat_fields(stat)) {
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
      }
    }
    if (!more) break;
  }
}

Stopped::Stopped(Stopped&& other) noexcept : roots_(std::move(other.roots_)), stopped_(std::move(other.stopped_)) {
  other.stopped_.clear();
}

bool Stopped::whole(int wait_ms) const {
  const std::set<pid_t> stopped(stopped_.begin(), stopped_.end());
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (const pid_t pid : trees_of(roots_)) {
    if (stopped.count(pid) == 0 && state_of(pid) != '\0') return false;  // started after the last walk
    const std::string task = "/proc/" + std::to_string(pid) + "/task/";
    for (const pid_t tid : numbered_entries(task)) {
      const std::string stat = task + std::to_string(tid) + "/stat";
      for (;;) {
        const std::vector<std::string> fields = stat_fields(stat);
        // Stopped, stopped by a tracer, or ended (a thread that ended may still be listed).
        if (fields.empty() || fields[0] == "T" || fields[0] == "Z" || fields[0] == "X") break;
        if (fields[0] == "t" || std::chrono::steady_clock::now() >= give_up) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
  }
  return true;
}

Stopped::~Stopped() {
  for (auto pid = stopped_.rbegin(); pid != stopped_.rend(); ++pid) kill(*pid, SIGCONT);
}

}  // namespace backendbench::processes
