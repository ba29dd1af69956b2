// Device copies handed over as descriptors (device_share.h), and payloads that name them
// (worker_protocol.h). The descriptor passing runs everywhere; the device copies need a GPU.
#include "protocol/device_share.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "protocol/worker_protocol.h"

namespace backendbench::device_share {
namespace {

struct SocketPair {
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, ends), 0); }
  ~SocketPair() {
    close(ends[0]);
    close(ends[1]);
  }
  int ends[2];
};

TEST(DeviceShare, DescriptorsCrossASocketAndStillWork) {
  SocketPair sockets;
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  send_descriptors(sockets.ends[1], {pipe_ends[0], pipe_ends[1]});
  close(pipe_ends[0]);
  close(pipe_ends[1]);
  const Descriptors received(receive_descriptors(sockets.ends[0], 2, 1000));
  ASSERT_EQ(received.get().size(), 2u);
  // The received write end feeds the received read end: the same pipe, in this process now.
  ASSERT_EQ(write(received.get()[1], "x", 1), 1);
  char byte = 0;
  ASSERT_EQ(read(received.get()[0], &byte, 1), 1);
  EXPECT_EQ(byte, 'x');
}

TEST(DeviceShare, FewerDescriptorsThanAnnouncedIsAnError) {
  SocketPair sockets;
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  send_descriptors(sockets.ends[1], {pipe_ends[0]});
  close(pipe_ends[0]);
  close(pipe_ends[1]);
  EXPECT_THROW(receive_descriptors(sockets.ends[0], 2, 1000), std::runtime_error);
}

TEST(DeviceShare, AnnouncedDescriptorsThatNeverComeAreAnError) {
  SocketPair sockets;
  EXPECT_THROW(receive_descriptors(sockets.ends[0], 1, 50), std::runtime_error);
  EXPECT_THROW(receive_descriptors(sockets.ends[0], kMaxDescriptors + 1, 50), std::runtime_error);
}

// A payload whose table names a shared slot, where no slot was announced (or the storage is on
// the CPU): an error, never values.
TEST(DeviceShare, APayloadNamingASlotNeverAnnouncedIsAnError) {
  // Saved without sharing, then the table edited to say its storage is shared.
  std::vector<char> payload = worker::save_values({at::ones({4})});
  const std::string text(payload.begin(), payload.end());
  const std::string from = "\"device\":\"cpu\"}", to = "\"device\":\"cpu\",\"shared\":0}";
  ASSERT_NE(text.find(from), std::string::npos);
  // The table's length is the first u64: rewrite it with the longer table.
  const uint64_t table_bytes = static_cast<uint64_t>(static_cast<unsigned char>(payload[0])) |
                               static_cast<uint64_t>(static_cast<unsigned char>(payload[1])) << 8;
  std::string table = text.substr(24, table_bytes);
  table.replace(table.find(from), from.size(), to);
  std::string rebuilt = text.substr(0, 24) + table + text.substr(24 + table_bytes);
  rebuilt[0] = static_cast<char>(table.size() & 0xff);
  rebuilt[1] = static_cast<char>((table.size() >> 8) & 0xff);
  std::vector<char> hostile(rebuilt.begin(), rebuilt.end());
  EXPECT_THROW(worker::load_values(hostile), worker::ProtocolError);
  const Imports none;
  EXPECT_THROW(worker::load_values(hostile, &none), worker::ProtocolError) << "a CPU storage is never shared";
  EXPECT_THROW(none.copy_out(0, 4), std::runtime_error) << "no slot 0 was announced";
  Imports imports;
  EXPECT_THROW(imports.retire(3), std::runtime_error) << "a slot never announced cannot be retired";
}

// Exports and imports in one process stand for a worker and its supervisor (descriptors work
// within a process as across one).
struct Supervisor {
  Imports imports;
  // Announces what `exports` made since the last answer, as the worker's answer does.
  void receive(Exports& exports, c10::Device device) {
    const Exports::Changes changes = exports.finish();
    for (const uint64_t slot : changes.retired) imports.retire(slot);
    for (size_t i = 0; i < changes.new_slots.size(); ++i) {
      imports.adopt(changes.new_slots[i], changes.descriptors[i], changes.new_sizes[i], device);
    }
    exports.sent(changes);
  }
};

// A process of its own (Python with torch, exec'd: CUDA does not survive a fork) holding the GPU:
// "idle" has initialised CUDA and waits; "spin" has left a kernel running (torch.cuda._sleep, for
// minutes). `ready` once it says so.
struct GpuHolder {
  explicit GpuHolder(const std::string& mode) {
    int out[2];
    if (pipe(out) != 0) return;
    pid = fork();
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      const char* script =
          "import sys, time, torch\n"
          "torch.zeros(1, device='cuda'); torch.cuda.synchronize()\n"
          "if sys.argv[1] == 'spin': torch.cuda._sleep(1 << 40)\n"
          "print('ready', flush=True)\n"
          "time.sleep(300)\n";
      execl(BACKENDBENCH_TEST_PYTHON, BACKENDBENCH_TEST_PYTHON, "-c", script, mode.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    pollfd wait{out[0], POLLIN, 0};
    char said[8] = {};
    ready = pid > 0 && poll(&wait, 1, 120000) == 1 && read(out[0], said, 5) == 5 && std::string(said) == "ready";
    close(out[0]);
  }
  ~GpuHolder() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  pid_t pid = -1;
  bool ready = false;
};

TEST(DeviceShare, AProcessWithoutCudaIsNeverTakenForLocked) {
  // Everywhere: on a machine whose driver locks processes this one has no CUDA state to lock;
  // elsewhere nothing can be locked. Either way the run cannot go on as if it were held.
  const pid_t child = fork();
  if (child == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(child, 0);
  ProcessLocks locks({child}, 100);
  EXPECT_FALSE(locks.locked());
  EXPECT_FALSE(locks.error().empty());
  EXPECT_FALSE(locks.work_left()) << locks.error();
  EXPECT_TRUE(locks.pids().empty());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST(DeviceShare, AFileHeldOpenOrMappedIsSeenInTheProcesssProc) {
  // /dev/null stands for the GPU's device files, which a CPU machine has none of.
  const pid_t holder = fork();
  if (holder == 0) {
    execlp("sh", "sh", "-c", "exec 3</dev/null; exec sleep 30", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(holder, 0);
  bool seen = false;
  for (int tries = 0; tries < 200 && !seen; ++tries) {  // until the shell has opened it and exec'd
    seen = holds_device_file(holder, "/dev/null");
    if (!seen) usleep(10000);
  }
  EXPECT_TRUE(seen);
  EXPECT_FALSE(holds_device_file(holder, "/dev/nvidia-not-a-device"));
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  EXPECT_FALSE(holds_device_file(holder, "/dev/null")) << "an ended process holds nothing";
  // Its own mappings count too: this process maps libc, for one.
  std::ifstream maps("/proc/self/maps");
  std::string line, mapped;
  while (mapped.empty() && std::getline(maps, line)) {
    if (line.find("/libc") != std::string::npos) mapped = line.substr(line.find('/'));
  }
  ASSERT_FALSE(mapped.empty());
  EXPECT_TRUE(holds_device_file(getpid(), mapped));
}

TEST(DeviceShare, AProcessIsLockedOnlyOnceNoWorkOfItsIsLeftOnTheGpu) {
  if (!at::hasCUDA() || !ProcessLocks::available()) GTEST_SKIP() << "no GPU whose driver locks processes";
  if (std::string(BACKENDBENCH_TEST_PYTHON).empty()) GTEST_SKIP() << "no Python to hold the GPU with";
  GpuHolder idle("idle"), spinning("spin");
  ASSERT_TRUE(idle.ready && spinning.ready) << "the processes holding the GPU did not start";
  const pid_t no_cuda = fork();
  if (no_cuda == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  {
    // A tree as a worker's: a process without CUDA (bubblewrap's) is passed over, the worker locked.
    ProcessLocks locks({no_cuda, idle.pid}, 500);
    EXPECT_TRUE(locks.locked()) << locks.error();
    EXPECT_EQ(locks.pids(), std::vector<pid_t>{idle.pid});
    EXPECT_NO_THROW(locks.unlock());
    EXPECT_TRUE(locks.pids().empty());
  }
  {
    ProcessLocks locks({idle.pid}, 500);  // unlocked above: it can be locked again
    EXPECT_TRUE(locks.locked()) << locks.error();
  }
  const auto started = std::chrono::steady_clock::now();
  ProcessLocks refused({idle.pid, spinning.pid}, 300);
  EXPECT_FALSE(refused.locked());
  EXPECT_TRUE(refused.work_left()) << refused.error();
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(250)) << "it waited for the kernel";
  kill(no_cuda, SIGKILL);
  waitpid(no_cuda, nullptr, 0);
}

TEST(DeviceShare, ACudaStorageCrossesAsADeviceCopyInASlotUsedAgain) {
  const c10::Device device(c10::DeviceType::CUDA, 0);
  if (!at::hasCUDA() || !available(device)) GTEST_SKIP() << "no GPU that exports memory as descriptors";
  Exports exports;
  Supervisor supervisor;
  const at::Tensor big = at::arange(1 << 20, at::TensorOptions().dtype(at::kFloat).device(device));
  const std::vector<char> payload = worker::save_values({big, big.narrow(0, 5, 10)}, &exports);
  EXPECT_LT(payload.size(), size_t{1} << 20) << "its bytes are not in the payload";
  const Exports::Changes first = exports.finish();
  ASSERT_EQ(first.new_slots.size(), 1u) << "one storage, one slot";
  supervisor.receive(exports, device);
  const std::vector<c10::IValue> loaded = worker::load_values(payload, &supervisor.imports);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_TRUE(at::equal(loaded[0].toTensor(), big));
  EXPECT_TRUE(at::equal(loaded[1].toTensor(), big.narrow(0, 5, 10)));
  EXPECT_EQ(loaded[1].toTensor().storage().data(), loaded[0].toTensor().storage().data()) << "still one storage";
  EXPECT_NE(loaded[0].toTensor().data_ptr(), big.data_ptr());

  // The next answer reuses the slot: nothing new to announce, and the first copy is unchanged.
  exports.reuse();
  const at::Tensor other = -big;
  const std::vector<char> again = worker::save_values({other}, &exports);
  EXPECT_TRUE(exports.finish().empty()) << "the slot is used again, not made anew";
  const std::vector<c10::IValue> second = worker::load_values(again, &supervisor.imports);
  EXPECT_TRUE(at::equal(second[0].toTensor(), other));
  EXPECT_TRUE(at::equal(loaded[0].toTensor(), big)) << "what was copied out is the supervisor's own";

  // A storage longer than its slot is not copied out.
  EXPECT_THROW(supervisor.imports.copy_out(first.new_slots[0], first.new_sizes[0] + 1), std::runtime_error);
}

TEST(DeviceShare, ASlotIsAnnouncedOnceAndMapsOnlyWhatItHolds) {
  const c10::Device device(c10::DeviceType::CUDA, 0);
  if (!at::hasCUDA() || !available(device)) GTEST_SKIP() << "no GPU that exports memory as descriptors";
  Exports exports;
  (void)worker::save_values({at::zeros({1 << 19}, at::TensorOptions().device(device))}, &exports);
  const Exports::Changes changes = exports.finish();
  ASSERT_EQ(changes.new_slots.size(), 1u);
  Imports imports;
  // An allocation smaller than the slot's claimed size does not map.
  EXPECT_THROW(imports.adopt(7, changes.descriptors[0], changes.new_sizes[0] * 8, device), std::runtime_error);
  imports.adopt(7, changes.descriptors[0], changes.new_sizes[0], device);
  EXPECT_THROW(imports.adopt(7, changes.descriptors[0], changes.new_sizes[0], device), std::runtime_error)
      << "an id announced twice";
  imports.retire(7);
  EXPECT_THROW(imports.copy_out(7, 1), std::runtime_error) << "a retired slot is gone";
}

TEST(DeviceShare, SlotsOverTheLimitAreRetired) {
  const c10::Device device(c10::DeviceType::CUDA, 0);
  if (!at::hasCUDA() || !available(device)) GTEST_SKIP() << "no GPU that exports memory as descriptors";
  Exports exports(/*limit_bytes=*/uint64_t{8} << 20);
  Supervisor supervisor;
  const auto options = at::TensorOptions().dtype(at::kByte).device(device);
  (void)worker::save_values({at::ones({4 << 20}, options)}, &exports);
  supervisor.receive(exports, device);
  exports.reuse();
  // 8 MiB more does not fit beside the first 4 MiB slot: the free slot goes.
  const at::Tensor larger = at::full({8 << 20}, 3, options);
  const std::vector<char> payload = worker::save_values({larger}, &exports);
  const Exports::Changes changes = exports.finish();
  EXPECT_EQ(changes.retired.size(), 1u);
  EXPECT_EQ(changes.new_slots.size(), 1u);
  supervisor.receive(exports, device);
  EXPECT_TRUE(at::equal(worker::load_values(payload, &supervisor.imports)[0].toTensor(), larger));
}

}  // namespace
}  // namespace backendbench::device_share
