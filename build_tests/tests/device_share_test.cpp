// Device copies handed over as descriptors (device_share.h), and payloads that name them
// (worker_protocol.h). The descriptor passing runs everywhere; the device copies need a GPU.
#include "backendbench/device_share.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <string>

#include "backendbench/worker_protocol.h"

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

// A payload whose table names a shared storage, with no descriptor to go with it (or one that
// is not a device allocation): an error, never values.
TEST(DeviceShare, APayloadNamingADescriptorNotSentIsAnError) {
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
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  EXPECT_THROW(worker::load_values(hostile, {pipe_ends[0]}), worker::ProtocolError) << "a CPU storage is never shared";
  close(pipe_ends[0]);
  close(pipe_ends[1]);
}

TEST(DeviceShare, ACudaStorageCrossesAsADeviceCopy) {
  const c10::Device device(c10::DeviceType::CUDA, 0);
  if (!at::hasCUDA() || !available(device)) GTEST_SKIP() << "no GPU that exports memory as descriptors";
  const at::Tensor big = at::arange(1 << 20, at::TensorOptions().dtype(at::kFloat).device(device));
  std::vector<int> shared;
  const std::vector<char> payload = worker::save_values({big, big.narrow(0, 5, 10)}, &shared);
  ASSERT_EQ(shared.size(), 1u) << "one storage, one descriptor";
  EXPECT_LT(payload.size(), size_t{1} << 20) << "its bytes are not in the payload";
  const std::vector<c10::IValue> loaded = worker::load_values(payload, shared);
  release_exports();  // the copy loaded above is this process's own: freeing the export changes nothing
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_TRUE(at::equal(loaded[0].toTensor(), big));
  EXPECT_TRUE(at::equal(loaded[1].toTensor(), big.narrow(0, 5, 10)));
  EXPECT_EQ(loaded[1].toTensor().storage().data(), loaded[0].toTensor().storage().data()) << "still one storage";
  EXPECT_NE(loaded[0].toTensor().data_ptr(), big.data_ptr());
  // A descriptor of an allocation smaller than the storage the table claims does not map.
  std::vector<int> small_shared;
  const std::vector<char> small = worker::save_values({big.narrow(0, 0, 1 << 19).clone()}, &small_shared);
  ASSERT_EQ(small_shared.size(), 1u);
  EXPECT_THROW(import_copy(small_shared[0], uint64_t{64} << 20, device), std::runtime_error);
  release_exports();
}

}  // namespace
}  // namespace backendbench::device_share
