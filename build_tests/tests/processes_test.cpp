// Unit tests of processes.h: a tree of processes found, stopped and measured from outside.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "backendbench/processes.h"

namespace backendbench {
namespace {

using namespace std::chrono_literals;

// A child that starts a grandchild; both spin on every thread they have (two each) until killed.
// Returns the child's pid.
pid_t start_spinning_family() {
  const pid_t child = fork();
  if (child != 0) return child;
  const auto spin = [] {
    volatile unsigned long spun = 0;
    for (;;) spun = spun + 1;
  };
  if (fork() == 0) {
    std::thread(spin).detach();
    spin();
  }
  std::thread(spin).detach();
  spin();
  return 0;
}

void end_family(pid_t child) {
  for (const pid_t pid : processes::tree_of(child)) kill(pid, SIGKILL);
  waitpid(child, nullptr, 0);
}

std::vector<pid_t> tree_when_grown(pid_t child, size_t size) {
  std::vector<pid_t> tree;
  for (int tries = 0; tries < 200 && (tree = processes::tree_of(child)).size() < size; ++tries) std::this_thread::sleep_for(5ms);
  return tree;
}

TEST(Processes, TreeHoldsTheChildAndItsChildren) {
  const pid_t child = start_spinning_family();
  const std::vector<pid_t> tree = tree_when_grown(child, 2);
  end_family(child);
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree.front(), child);
  EXPECT_NE(tree.back(), child);
  EXPECT_TRUE(processes::tree_of(child).empty()) << "an ended process has no tree";
}

TEST(Processes, StoppedTreeSpendsNoTimeUntilReleased) {
  const pid_t child = start_spinning_family();
  const std::vector<pid_t> tree = tree_when_grown(child, 2);
  ASSERT_EQ(tree.size(), 2u);
  double stopped_seconds = 0, released_seconds = 0;
  {
    const processes::Stopped stopped({child});
    EXPECT_EQ(stopped.pids().size(), 2u);
    for (const pid_t pid : tree) EXPECT_EQ(processes::state_of(pid), 'T');
    const double before = processes::cpu_seconds_of(tree);
    std::this_thread::sleep_for(300ms);
    stopped_seconds = processes::cpu_seconds_of(tree) - before;
  }
  const double before = processes::cpu_seconds_of(tree);
  std::this_thread::sleep_for(300ms);
  released_seconds = processes::cpu_seconds_of(tree) - before;
  end_family(child);
  // Four spinning threads: stopped, not a tick (10 ms) of theirs; released, at least a tenth of a
  // core's 300 ms even on a machine busy with other work.
  EXPECT_LE(stopped_seconds, 0.011);
  EXPECT_GE(released_seconds, 0.03);
}

// A stopped tree is whole until one of its processes runs again (here let go from outside, as
// another process could): the supervisor writes a run's inputs only into a whole one.
TEST(Processes, AStoppedTreeIsWholeUntilOneOfItsProcessesRuns) {
  const pid_t child = start_spinning_family();
  const std::vector<pid_t> tree = tree_when_grown(child, 2);
  ASSERT_EQ(tree.size(), 2u);
  const processes::Stopped stopped({child});
  const bool whole = stopped.whole();
  kill(tree.back(), SIGCONT);
  const bool whole_after = stopped.whole(/*wait_ms=*/50);
  end_family(child);
  EXPECT_TRUE(whole);
  EXPECT_FALSE(whole_after) << "the grandchild spins again";
}

TEST(Processes, LoadMeterCountsOthersAndNotItsOwn) {
  const pid_t child = start_spinning_family();
  ASSERT_EQ(tree_when_grown(child, 2).size(), 2u);
  // The same interval, read twice: once with the family as other work, once as the meter's own.
  // Whatever else the machine does counts in both; the family only in the first.
  const processes::LoadMeter theirs({}), ours({child});
  std::this_thread::sleep_for(500ms);
  const double as_others = theirs.other_cores(), as_own = ours.other_cores(), waited = ours.waited_share();
  end_family(child);
  // Four spinning threads on fewer cores: one of them is always waiting for a core.
  if (processes::cpu_stall_microseconds() >= 0 && std::thread::hardware_concurrency() < 4) {
    EXPECT_GE(waited, 0.5);
  }
  const double family_cores = std::min(4.0, static_cast<double>(std::thread::hardware_concurrency()));
  EXPECT_GE(as_others - as_own, 0.2 * family_cores) << "others " << as_others << ", own " << as_own;
  EXPECT_GE(as_others, 0.2 * family_cores);
}

TEST(Processes, ALoadReadingTooShortForClockTicksSaysNothing) {
  const processes::LoadMeter meter({});
  EXPECT_EQ(meter.other_cores(), -1);
}

TEST(Processes, MachineTimeAdvances) {
  const processes::MachineTime before = processes::machine_time();
  std::this_thread::sleep_for(50ms);
  const processes::MachineTime after = processes::machine_time();
  EXPECT_GT(after.all, before.all);
  EXPECT_GE(after.busy, before.busy);
  EXPECT_LE(after.busy, after.all);
  EXPECT_LE(after.user, after.busy);
}

}  // namespace
}  // namespace backendbench
