// The supervisors a run keeps for its correctness phase (build_service/entry_servers.h), against
// scripted servers (sh scripts standing in for test executables): started before the build, they
// serve the plan made after it only while the build left their executables as they were.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "build_service/entry_servers.h"

namespace {

using backendbench::build::EntryServers;

// A folder of its own with an executable script that says it listens, then waits for its input's end.
class ScriptedServers : public ::testing::Test {
 protected:
  void SetUp() override {
    char folder[] = "/tmp/backendbench_entry_servers_XXXXXX";
    ASSERT_NE(mkdtemp(folder), nullptr);
    folder_ = folder;
    write_executable(executable());
  }
  void TearDown() override { std::system(("rm -rf '" + folder_ + "'").c_str()); }

  std::string executable() const { return folder_ + "/backendbench_test_smoke"; }
  // `then`: what it does once it said so (by default, wait for its input's end).
  static void write_executable(const std::string& path, const std::string& then = "cat > /dev/null") {
    std::ofstream(path) << "#!/bin/sh\n"
                        << "echo \"{\\\"listening\\\": \\\"$1\\\"}\"\n"
                        << then << "\n";
    chmod(path.c_str(), 0755);
  }
  EntryServers::Plan plan(int per_gpu, bool spares) const {
    EntryServers::Plan plan;
    plan.executables = {{executable(), per_gpu, spares}};
    plan.kernel_root = folder_;
    plan.log_path = folder_ + "/servers.log";
    return plan;
  }

  std::string folder_;
};

TEST_F(ScriptedServers, StartedBeforeTheBuildTheyListenWhenWaitedFor) {
  EntryServers servers(plan(1, true));
  EXPECT_EQ(servers.started(), 1);
  EXPECT_EQ(servers.wait_until_listening(30), 1);
}

TEST_F(ScriptedServers, ThePlanAfterTheBuildAddsWhatItNeedsMore) {
  EntryServers servers(plan(1, true));
  ASSERT_TRUE(servers.covers(plan(2, true)));
  ASSERT_TRUE(servers.covers(plan(2, false)));  // a spare worker it does not need does no harm
  servers.extend(plan(2, true));
  EXPECT_EQ(servers.started(), 2);
  EXPECT_EQ(servers.wait_until_listening(30), 2);
  servers.extend(plan(2, true));  // nothing more
  EXPECT_EQ(servers.started(), 2);
}

TEST_F(ScriptedServers, AnExecutableLinkedAnewIsNotServed) {
  EntryServers servers(plan(1, true));
  ASSERT_EQ(servers.wait_until_listening(30), 1);
  ASSERT_TRUE(servers.covers(plan(1, true)));
  // As a linker writes it: a new file in its place.
  std::remove(executable().c_str());
  write_executable(executable());
  EXPECT_FALSE(servers.covers(plan(1, true)));
}

TEST_F(ScriptedServers, AnotherEnvironmentOrSparesWhereThereWereNoneAreNotServed) {
  EntryServers servers(plan(1, false));
  EXPECT_FALSE(servers.covers(plan(1, true)));
  EntryServers::Plan other = plan(1, false);
  other.environment["OMP_NUM_THREADS"] = "3";
  EXPECT_FALSE(servers.covers(other));
}

TEST_F(ScriptedServers, AServerThatEndedIsNotServed) {
  write_executable(executable(), "exit 0");  // it ends by itself, its input still open
  EntryServers servers(plan(1, false));
  ASSERT_EQ(servers.wait_until_listening(30), 1);
  for (int waited = 0; waited < 100 && servers.covers(plan(1, false)); ++waited) usleep(50 * 1000);
  EXPECT_FALSE(servers.covers(plan(1, false)));
}

}  // namespace
