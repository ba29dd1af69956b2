// The supervisors a run keeps for its correctness phase (planner/entry_servers.h), against
// scripted servers (sh scripts standing in for test executables): started before the build, they
// serve the plan made after it only while the build left their executables as they were.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "planner/entry_servers.h"
#include "planner/gpu_files.h"

namespace {

using backendbench::planner::EntryServers;

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

// Two device files of this host that bubblewrap's own /dev lacks, standing in for two GPUs' files.
std::vector<std::string> two_host_only_device_files() {
  std::vector<std::string> files;
  for (const char* file : {"/dev/tty1", "/dev/tty2", "/dev/loop0", "/dev/loop1", "/dev/vcs", "/dev/vcs1", "/dev/kmsg", "/dev/cpu_dma_latency"}) {
    if (files.size() < 2 && (std::filesystem::is_character_file(file) || std::filesystem::is_block_file(file))) {
      files.push_back(file);
    }
  }
  return files;
}

TEST_F(ScriptedServers, OnAGpuEachSeesThatGpusDeviceFileAloneAndCudaNumbersItZero) {
  const std::vector<std::string> files = two_host_only_device_files();
  const char* bubblewrap = access("/usr/bin/bwrap", X_OK) == 0 ? "/usr/bin/bwrap" : nullptr;
  if (files.size() < 2 || bubblewrap == nullptr) GTEST_SKIP() << "needs bubblewrap and two device files bubblewrap's /dev lacks";
  // What the server sees: its device folder and the variables of its GPU.
  write_executable(executable(), "ls /dev > \"$(dirname \"$0\")/dev.$CTEST_RESOURCE_GROUP_0_GPUS\"; "
                                 "echo \"$BACKENDBENCH_ONE_GPU_FILE\" >> \"$(dirname \"$0\")/dev.$CTEST_RESOURCE_GROUP_0_GPUS\"; cat > /dev/null");
  EntryServers::Plan one_file = plan(1, false);
  one_file.gpus = {"0", "1"};
  one_file.gpu_files = files;
  one_file.bubblewrap = bubblewrap;
  {
    EntryServers servers(one_file);
    ASSERT_EQ(servers.wait_until_listening(30), 2);
    EntryServers::Plan every_file = one_file;
    every_file.bubblewrap.clear();
    EXPECT_FALSE(servers.covers(every_file));  // servers that see one file each are not those
    EXPECT_TRUE(servers.covers(one_file));
  }
  for (int gpu = 0; gpu < 2; ++gpu) {
    std::ifstream seen(folder_ + "/dev.id:" + std::to_string(gpu) + ",slots:1");
    std::stringstream text;
    text << seen.rdbuf();
    const std::string own = std::filesystem::path(files[gpu]).filename(), other = std::filesystem::path(files[1 - gpu]).filename();
    EXPECT_NE(text.str().find("\n" + own + "\n"), std::string::npos) << text.str();
    EXPECT_EQ(text.str().find("\n" + other + "\n"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("shm\n"), std::string::npos) << text.str();  // the host's shared memory, bound back
    EXPECT_NE(text.str().find("\n1\n"), std::string::npos) << text.str();  // BACKENDBENCH_ONE_GPU_FILE
  }
}

TEST(GpuFiles, TheMinorNumberOfTheDriversInformation) {
  const std::string information =
      "Model: \t\t NVIDIA H200\nIRQ:   \t\t 38\nGPU UUID: \t GPU-0b7d\nVideo BIOS: \t 96.00.9f.00.01\n"
      "Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDevice Minor: \t 2\nBus Location: \t 0000:00:08.0\n";
  EXPECT_EQ(backendbench::planner::device_minor(information), 2);
  EXPECT_EQ(backendbench::planner::device_minor("Model: \t\t NVIDIA H200\n"), std::nullopt);
  EXPECT_EQ(backendbench::planner::device_minor("Device Minor: \t two\n"), std::nullopt);
}

TEST(GpuFiles, OnePciAddressWrittenTheWaysCudaNvmlAndTheDriverWriteIt) {
  using backendbench::planner::same_pci_address;
  EXPECT_TRUE(same_pci_address("0000:00:06.0", "00000000:00:06.0"));
  EXPECT_TRUE(same_pci_address("0000:1A:00.0", "0000:1a:00.0"));
  EXPECT_FALSE(same_pci_address("0000:00:06.0", "0000:00:07.0"));
  EXPECT_FALSE(same_pci_address("0000:00:06.0", "0000:00:06"));
  EXPECT_FALSE(same_pci_address("", "0000:00:06.0"));
}

}  // namespace
