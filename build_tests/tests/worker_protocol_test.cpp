// The kernel worker's protocol (worker_protocol.h): framing, payloads, and hostile messages.
#include "backendbench/worker_protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <string>

namespace backendbench::worker {
namespace {

struct Pipe {
  Pipe() { EXPECT_EQ(pipe(ends), 0); }
  ~Pipe() {
    close(ends[0]);
    if (ends[1] >= 0) close(ends[1]);
  }
  void write_raw(const std::string& text) { ASSERT_EQ(::write(ends[1], text.data(), text.size()), static_cast<ssize_t>(text.size())); }
  void close_writer() {
    close(ends[1]);
    ends[1] = -1;
  }
  int ends[2];
};

TEST(WorkerProtocol, AMessageRoundTrips) {
  Pipe pipe;
  write_message(pipe.ends[1], {"{\"kind\":\"call\"}", {'a', 'b', 'c'}});
  const std::optional<Message> read = read_message(pipe.ends[0], 1000);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->header, "{\"kind\":\"call\",\"payload_bytes\":3}");
  EXPECT_EQ(std::string(read->payload.begin(), read->payload.end()), "abc");
}

TEST(WorkerProtocol, TheEndOfThePipeBeforeAMessageIsNoMessage) {
  Pipe pipe;
  pipe.close_writer();
  EXPECT_FALSE(read_message(pipe.ends[0], 1000).has_value());
}

TEST(WorkerProtocol, HostileMessagesAreErrors) {
  for (const std::string& text : {std::string("{\"kind\":\"call\"}\n"),                        // no size
                                  std::string("{\"payload_bytes\":99999999999999999999}\n"),  // over the limit
                                  std::string("{\"payload_bytes\":10,\"x\":1}\n"),             // size not last
                                  std::string("{\"payload_bytes\":10}\nabc")}) {               // cut short
    Pipe pipe;
    pipe.write_raw(text);
    pipe.close_writer();
    EXPECT_THROW(read_message(pipe.ends[0], 1000), ProtocolError) << text;
  }
}

TEST(WorkerProtocol, ASilentWorkerTimesOut) {
  Pipe pipe;
  EXPECT_THROW(read_message(pipe.ends[0], 50), TimeoutError);
}

TEST(WorkerProtocol, ValuesKeepStridesAndSharedStorage) {
  const at::Tensor base = at::arange(12, at::kFloat).reshape({3, 4});
  const at::Tensor view = base.t();
  const std::vector<c10::IValue> loaded = load_values(save_values({base, view, c10::IValue(2.5), c10::IValue()}));
  ASSERT_EQ(loaded.size(), 4u);
  const at::Tensor a = loaded[0].toTensor(), b = loaded[1].toTensor();
  EXPECT_TRUE(at::equal(a, base));
  EXPECT_EQ(b.strides(), view.strides());
  EXPECT_TRUE(b.is_alias_of(a));
  EXPECT_EQ(loaded[2].toDouble(), 2.5);
  EXPECT_TRUE(loaded[3].isNone());
}

TEST(WorkerProtocol, APayloadThatIsNotValuesIsAnError) {
  EXPECT_THROW(load_values({'n', 'o', 't'}), ProtocolError);
}

}  // namespace
}  // namespace backendbench::worker
