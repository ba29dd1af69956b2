// The kernel worker's protocol (worker_protocol.h): framing, payloads, and hostile messages.
#include "protocol/worker_protocol.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/inputs.h"
#include "backendbench/kernel_imports.h"
#include "protocol/memory_file.h"
#include "supervisor/kernel_workers.h"
#include "worker/serve.h"

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

TEST(ReferenceBound, AFigureWithinTwiceTheHonestFloorNeedsNoTiming) {
  // On CUDA (agreement 2) with a floor of 100 us: a figure of at most 202 us holds against any
  // figure of this process's, which cannot be under 100 us.
  EXPECT_FALSE(reference_figure_needs_timing(150, kReferenceAgreement, 100));
  EXPECT_FALSE(reference_figure_needs_timing(202, kReferenceAgreement, 100));
  EXPECT_TRUE(reference_figure_needs_timing(203, kReferenceAgreement, 100));
  // No floor (peaks that are no bound): only a figure within the slack.
  EXPECT_FALSE(reference_figure_needs_timing(kReferenceSlackUs, kReferenceAgreement, 0));
  EXPECT_TRUE(reference_figure_needs_timing(kReferenceSlackUs + 0.5, kReferenceAgreement, 0));
  EXPECT_TRUE(reference_figure_needs_timing(std::nan(""), kReferenceAgreement, 100));
  // A figure under the floor itself (a gather's overcounted bytes, or a worker's lie): timed here,
  // so that this process's own time says whether the floor bounds the case (suspect_time).
  EXPECT_TRUE(reference_figure_needs_timing(4.5, kReferenceAgreement, 104));
}

TEST(ReferenceBound, OnCudaAWorkersReferenceFigureCountsAtMostFivePerCentAboveTheSupervisors) {
  // impl15 of gallery/cuda_timing_cheats: its worker's reference slowed 1.8x, within the 2x that
  // fails a case; counted at the supervisor's figure and 5 %.
  EXPECT_DOUBLE_EQ(counted_reference_us(180, 100, kCudaCountedReferenceAgreement), 105 + kReferenceSlackUs);
  EXPECT_DOUBLE_EQ(counted_reference_us(104, 100, kCudaCountedReferenceAgreement), 104);
  // A worker's figure under the supervisor's stands: the speedup only ever loses by it.
  EXPECT_DOUBLE_EQ(counted_reference_us(90, 100, kCudaCountedReferenceAgreement), 90);
}

// A worker's timing answer as the supervisor counts it: anything in the kernel's process can
// rewrite it, so every figure is computed from the pairs it sends, and the flags that describe a
// speedup are the supervisor's.
nlohmann::json time_answer(std::vector<double> reference_s, std::vector<double> kernel_s, std::vector<std::string> flags = {}) {
  return {{"reference_us", 1.0}, {"kernel_us", 1.0}, {"kernel_mean_us", 1.0}, {"speedup", 1000.0}, {"samples", 99},
          {"iqr_pct", 0.0}, {"reference_iqr_pct", 0.0}, {"launch_overhead_us", 5.0}, {"hidden_work_us", 0.0},
          {"flags", flags}, {"errors", std::vector<std::string>{}},
          {"reference_samples", reference_s}, {"kernel_samples", kernel_s}};
}

TEST(CountedMeasurement, EveryFigureComesFromThePairsNotFromTheWorkersOwnFields) {
  // Its fields say 1000x (what a kernel that rewrote only `speedup` was scored); its pairs, 0.08x.
  const Measurement m = counted_measurement(time_answer({8e-6, 8e-6, 8e-6, 8e-6}, {100e-6, 100e-6, 100e-6, 100e-6}), 100);
  EXPECT_NEAR(m.figures.speedup, 0.08, 1e-12);
  EXPECT_NEAR(m.figures.reference_us, 8, 1e-9);
  EXPECT_NEAR(m.figures.kernel_us, 100, 1e-9);
  EXPECT_EQ(m.figures.samples, 4);
  EXPECT_TRUE(m.errors.empty());
  EXPECT_TRUE(m.flags.empty());
}

TEST(CountedMeasurement, OnlyFlagsThatFailACaseAreTakenFromTheWorker) {
  // A worker that leaves out speedup_review, and claims flags that are this process's to decide.
  const Measurement m = counted_measurement(
      time_answer({300e-6, 300e-6}, {10e-6, 10e-6}, {"suspect", "overhead_dominated", "wrong_when_timed", "my_flag"}), 100);
  EXPECT_EQ(m.flags, (std::vector<std::string>{"wrong_when_timed", "speedup_review"}));
  EXPECT_NEAR(m.figures.speedup, 30.0, 1e-9);
}

TEST(CountedMeasurement, AMalformedAnswerIsAnError) {
  EXPECT_THROW(counted_measurement(time_answer({}, {}), 100), std::runtime_error);              // no pairs
  EXPECT_THROW(counted_measurement(time_answer({1e-6, 1e-6}, {1e-6}), 100), std::runtime_error);  // unpaired
  EXPECT_THROW(counted_measurement(time_answer({1e-6}, {0.0}), 100), std::runtime_error);        // a kernel of no time
  EXPECT_THROW(counted_measurement(time_answer({-1e-6}, {1e-6}), 100), std::runtime_error);
  EXPECT_THROW(counted_measurement(time_answer(std::vector<double>(101, 1e-6), std::vector<double>(101, 1e-6)), 100),
               std::runtime_error);  // more pairs than the request can need
  nlohmann::json answer = time_answer({1e-6}, {1e-6});
  answer["flags"] = {7};
  EXPECT_THROW(counted_measurement(answer, 100), std::exception);
  // A kernel that failed while timed has no pairs: its error is the answer, and it fails.
  answer = time_answer({}, {});
  answer["errors"] = {"impl1 failed while timed on relu.default case a: boom"};
  EXPECT_EQ(counted_measurement(answer, 100).errors.size(), 1u);
}

TEST(WorkerProtocol, AMessageRoundTrips) {
  Pipe pipe;
  write_message(pipe.ends[1], {"{\"kind\":\"call\"}", {'a', 'b', 'c'}});
  const std::optional<Message> read = MessageReader(pipe.ends[0]).read(1000);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->header, "{\"kind\":\"call\",\"payload_bytes\":3}");
  EXPECT_EQ(std::string(read->payload.begin(), read->payload.end()), "abc");
}

// Messages written back to back: the reader reads past the first header, and keeps what it read
// for the payload and the message after.
TEST(WorkerProtocol, MessagesBackToBackAreReadOneByOne) {
  Pipe pipe;
  write_message(pipe.ends[1], {"{\"n\":1}", {'x', 'y'}});
  write_message(pipe.ends[1], {"{\"n\":2}", {}});
  write_message(pipe.ends[1], {"{\"n\":3}", {'z'}});
  pipe.close_writer();
  MessageReader reader(pipe.ends[0]);
  const std::optional<Message> first = reader.read(1000), second = reader.read(1000), third = reader.read(1000);
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(first->header, "{\"n\":1,\"payload_bytes\":2}");
  EXPECT_EQ(std::string(first->payload.begin(), first->payload.end()), "xy");
  EXPECT_EQ(second->header, "{\"n\":2,\"payload_bytes\":0}");
  EXPECT_TRUE(second->payload.empty());
  EXPECT_EQ(std::string(third->payload.begin(), third->payload.end()), "z");
  EXPECT_FALSE(reader.read(1000).has_value()) << "then the end of the pipe";
}

TEST(WorkerProtocol, TheEndOfThePipeBeforeAMessageIsNoMessage) {
  Pipe pipe;
  pipe.close_writer();
  EXPECT_FALSE(MessageReader(pipe.ends[0]).read(1000).has_value());
}

// The answers serve_kernel_worker gives to `requests` (each a header's kinds and fields, with the
// payload of the same index in `payloads`, if any), and their payloads into `answer_payloads`.
// `socket`: the worker's end of its socket (descriptors sent to the other end wait there).
std::vector<nlohmann::json> answers_to(const std::vector<nlohmann::json>& requests, bool spare,
                                       std::optional<ManifestLine> to_load = std::nullopt,
                                       const std::vector<std::vector<char>>& payloads = {}, int socket = -1,
                                       std::vector<std::vector<char>>* answer_payloads = nullptr) {
  Pipe in, out;
  for (size_t i = 0; i < requests.size(); ++i) {
    nlohmann::json request = requests[i];
    request["schema"] = kRequestSchema;
    request["version"] = kProtocolVersion;
    write_message(in.ends[1], {request.dump(), i < payloads.size() ? payloads[i] : std::vector<char>()});
  }
  in.close_writer();
  WorkerStart start;
  start.socket = socket;
  start.awaiting_manifest = spare;
  EXPECT_EQ(serve_kernel_worker(in.ends[0], out.ends[1], to_load, start), 0);
  out.close_writer();
  std::vector<nlohmann::json> answers;
  MessageReader reader(out.ends[0]);
  while (std::optional<Message> answer = reader.read(1000)) {
    answers.push_back(nlohmann::json::parse(answer->header));
    if (answer_payloads != nullptr) answer_payloads->push_back(answer->payload);
  }
  return answers;
}

// Values split for a memory file load over it: what is written there later is what they hold.
TEST(MemoryFile, ValuesLoadedOverAFileHoldWhatIsWrittenThereLater) {
  const at::Tensor first = at::arange(6, at::kFloat).reshape({2, 3}), second = at::arange(4, at::kInt) * 7;
  const std::vector<c10::IValue> values = {c10::ivalue::Tuple::create({first.t(), 2.5}), second};
  const SplitValues split(values);
  const std::shared_ptr<MemoryFile> file = MemoryFile::create(split.file_bytes());
  const std::vector<c10::IValue> loaded = load_values_over(split.head(), memory_over(file));
  ASSERT_EQ(loaded.size(), 2u);
  const at::Tensor over_first = loaded[0].toTupleRef().elements()[0].toTensor(), over_second = loaded[1].toTensor();
  EXPECT_EQ(over_first.sizes(), first.t().sizes());
  EXPECT_EQ(over_first.strides(), first.t().strides());
  EXPECT_EQ(loaded[0].toTupleRef().elements()[1].toDouble(), 2.5);
  EXPECT_EQ(over_second.sum().item<int>(), 0) << "the file is empty until written";
  split.write_storages(file->data());
  EXPECT_TRUE(at::equal(over_first, first.t()));
  EXPECT_TRUE(at::equal(over_second, second));
}

// A head whose storage lies past the file's end, or on a device other than the CPU, is refused.
TEST(MemoryFile, AHeadThatReachesPastTheFileIsRefused) {
  const std::shared_ptr<MemoryFile> page = MemoryFile::create(16);  // a page, at least
  ASSERT_EQ(page->bytes(), static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  const int64_t fits = static_cast<int64_t>(page->bytes() / 4);
  EXPECT_EQ(load_values_over(SplitValues({at::ones({fits}, at::kFloat)}).head(), memory_over(page)).at(0).toTensor().numel(), fits);
  try {
    (void)load_values_over(SplitValues({at::ones({fits + 1}, at::kFloat)}).head(), memory_over(page));
    FAIL() << "a storage a float longer than the file was loaded";
  } catch (const ProtocolError& error) {
    EXPECT_NE(std::string(error.what()).find("a storage beyond the memory file's end"), std::string::npos) << error.what();
  }
  // The same head, its storage said to be CUDA's: a worker would build a CUDA tensor over host
  // memory.
  const std::vector<char> head = SplitValues({at::ones({4}, at::kFloat)}).head();
  uint64_t table_bytes = 0, structure_bytes = 0;
  std::memcpy(&table_bytes, head.data(), 8);
  std::memcpy(&structure_bytes, head.data() + 8, 8);
  std::string table(head.data() + 24, table_bytes);
  const size_t cpu = table.find("\"cpu\"");
  ASSERT_NE(cpu, std::string::npos) << table;
  table.replace(cpu, 5, "\"cuda:0\"");
  std::vector<char> forged(24 + table.size() + structure_bytes + 64, 0);
  std::memcpy(forged.data(), head.data(), 24);
  const uint64_t forged_table_bytes = table.size();
  std::memcpy(forged.data(), &forged_table_bytes, 8);
  std::memcpy(forged.data() + 24, table.data(), table.size());
  std::memcpy(forged.data() + 24 + table.size(), head.data() + 24 + table_bytes, structure_bytes);
  forged.resize((24 + table.size() + structure_bytes + 63) / 64 * 64);
  try {
    (void)load_values_over(forged, memory_over(page));
    FAIL() << "a CUDA storage was laid over a CPU memory file";
  } catch (const ProtocolError& error) {
    EXPECT_NE(std::string(error.what()).find("a storage in a memory file of another device"), std::string::npos) << error.what();
  }
}

// On CUDA a run's inputs are laid over device memory the supervisor exports (device_share.h:
// DeviceMemoryFile): the worker's import is the same memory, and what the supervisor writes there
// later is what the values loaded over it hold.
TEST(MemoryFile, OnCudaValuesLoadedOverAnImportedAllocationHoldWhatIsWrittenThereLater) {
  const c10::Device cuda(c10::DeviceType::CUDA, 0);
  if (!at::hasCUDA() || !device_share::available(cuda)) GTEST_SKIP() << "no CUDA device that shares memory";
  const at::Tensor first = at::arange(1 << 20, at::TensorOptions().dtype(at::kFloat).device(cuda)).reshape({1024, 1024});
  const at::Tensor second = at::arange(7, at::TensorOptions().dtype(at::kInt).device(cuda));
  const SplitValues split({first.t(), second});
  EXPECT_EQ(split.device(), cuda);
  const std::shared_ptr<device_share::DeviceMemoryFile> made = device_share::DeviceMemoryFile::create(split.file_bytes(), cuda);
  ASSERT_GE(made->descriptor(), 0);
  const std::shared_ptr<device_share::DeviceMemoryFile> imported =
      device_share::DeviceMemoryFile::adopt(made->descriptor(), split.file_bytes(), cuda);
  EXPECT_THROW((void)device_share::DeviceMemoryFile::adopt(made->descriptor(), split.file_bytes() + (uint64_t{1} << 30), cuda),
               std::runtime_error)
      << "an import is mapped no longer than the allocation";
  const std::vector<c10::IValue> loaded = load_values_over(split.head(), memory_over(imported));
  ASSERT_EQ(loaded.size(), 2u);
  const at::Tensor over_first = loaded[0].toTensor(), over_second = loaded[1].toTensor();
  EXPECT_EQ(over_first.device(), cuda);
  EXPECT_EQ(over_first.strides(), first.t().strides());
  at::Tensor(over_first).zero_();
  at::Tensor(over_second).zero_();
  split.write_storages(made->data());
  EXPECT_TRUE(at::equal(over_first, first.t()));
  EXPECT_TRUE(at::equal(over_second, second));
  // CPU storages are not laid over a CUDA allocation.
  EXPECT_THROW((void)load_values_over(SplitValues({at::ones({4}, at::kFloat)}).head(), memory_over(imported)), ProtocolError);
  EXPECT_THROW((void)SplitValues({first, at::ones({4}, at::kFloat)}), ProtocolError) << "one memory file, one device";
}

// The worker maps only a sealed memory file of the size its request says: one it could shrink
// would make the supervisor's writes fault.
TEST(MemoryFile, AWorkerAdoptsOnlyASealedFileOfTheSizeAsked) {
  const std::shared_ptr<MemoryFile> made = MemoryFile::create(8192);
  EXPECT_THROW((void)MemoryFile::adopt(made->descriptor(), 4096), std::runtime_error);
  const int unsealed = memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_GE(unsealed, 0);
  ASSERT_EQ(ftruncate(unsealed, 8192), 0);
  try {
    (void)MemoryFile::adopt(unsealed, 8192);
    FAIL() << "an unsealed file was adopted";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("is not a sealed memory file of 8192 bytes"), std::string::npos) << error.what();
  }
  close(unsealed);
  const std::shared_ptr<MemoryFile> adopted = MemoryFile::adopt(made->descriptor(), 8192);
  EXPECT_NE(fcntl(made->descriptor(), F_GETFD), -1) << "adopting a descriptor does not close it";
  made->data()[100] = 42;
  EXPECT_EQ(adopted->data()[100], 42) << "the same memory";
  EXPECT_NE(ftruncate(made->descriptor(), 4096), 0) << "sealed against shrinking";
}

// A spare worker (started before its job) loads only the manifest its first request names.
TEST(WorkerProtocol, ASpareWorkersFirstRequestIsLoad) {
  const std::vector<nlohmann::json> answers = answers_to(
      {{{"kind", "list"}}, {{"kind", "load"}, {"manifest", "/nonexistent/manifest.txt"}, {"line", 0}}, {{"kind", "list"}}}, true);
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[0].value("error", ""), "a spare worker's first request must be 'load'");
  EXPECT_FALSE(answers[1].contains("error")) << answers[1].dump();
  // The manifest that did not load is the answer to every later request.
  EXPECT_NE(answers[2].value("error", "").find("/nonexistent/manifest.txt"), std::string::npos) << answers[2].dump();
}

// A worker answers `round_trip` before it loads kernel code, and only then: the supervisor times
// its round trip on it, and no kernel can lengthen what it times. A worker started with its
// manifest loads it at its first other request (the missing manifest is not yet an error).
TEST(WorkerProtocol, ARoundTripIsAnsweredOnlyBeforeKernelCodeLoads) {
  const nlohmann::json round_trip = {{"kind", "round_trip"}};
  const std::vector<nlohmann::json> spare = answers_to(
      {round_trip, round_trip, {{"kind", "load"}, {"manifest", "/nonexistent/manifest.txt"}, {"line", 0}}, round_trip}, true);
  ASSERT_EQ(spare.size(), 4u);
  EXPECT_FALSE(spare[0].contains("error")) << spare[0].dump();
  EXPECT_FALSE(spare[1].contains("error")) << spare[1].dump();
  EXPECT_EQ(spare[3].value("error", ""), "'round_trip' is answered only before the worker loads kernel code");
  const std::vector<nlohmann::json> started_with_manifest =
      answers_to({round_trip, {{"kind", "list"}}, round_trip}, false, ManifestLine{"/nonexistent/manifest.txt", 0});
  ASSERT_EQ(started_with_manifest.size(), 3u);
  EXPECT_FALSE(started_with_manifest[0].contains("error")) << "not loaded yet: " << started_with_manifest[0].dump();
  EXPECT_NE(started_with_manifest[1].value("error", "").find("/nonexistent/manifest.txt"), std::string::npos)
      << "loaded at the first other request: " << started_with_manifest[1].dump();
  EXPECT_EQ(started_with_manifest[2].value("error", ""), "'round_trip' is answered only before the worker loads kernel code");
}

// The shared path's probe (worker_pool.h: run_inputs_path) is a GPU worker's, answered only before
// it loads kernel code, as `round_trip`: a worker that has loaded kernel code, or runs no CUDA,
// refuses it (the supervisor then leaves the path unused), and the probe does not count as the
// first other request that loads the manifest.
TEST(WorkerProtocol, TheSharedPathsProbeIsAnsweredOnlyByAGpuWorkerBeforeKernelCodeLoads) {
  const nlohmann::json probe = {{"kind", "run_inputs_probe"}};
  const std::vector<nlohmann::json> cpu =
      answers_to({probe, {{"kind", "list"}}, probe}, false, ManifestLine{"/nonexistent/manifest.txt", 0});
  ASSERT_EQ(cpu.size(), 3u);
  const std::string refused = "'run_inputs_probe' is answered only by a GPU worker before it loads kernel code";
  EXPECT_EQ(cpu[0].value("error", ""), refused) << "a CPU worker has no shared path";
  EXPECT_NE(cpu[1].value("error", "").find("/nonexistent/manifest.txt"), std::string::npos)
      << "the manifest loads at the first request that is not a probe: " << cpu[1].dump();
  EXPECT_EQ(cpu[2].value("error", ""), refused);
}

// A call of several draws (a case's checks, sent at once so that the worker calls the next draw
// while the supervisor checks the last): one answer per draw, in order, made on that draw's
// inputs; an error ends the request's answers, and the next request is answered afresh.
TEST(WorkerProtocol, ACallOfSeveralDrawsIsAnsweredOncePerDrawInOrderUntilAnError) {
  class FailsOnItsSecondCall : public Backend {
   public:
    FailsOnItsSecondCall(std::vector<at::Tensor>& seen) : Backend("impl97", Kind::kKernel), seen_(seen) {}
    c10::Device device(const Settings&) const override { return c10::Device(c10::kCPU); }
    Stack call(const c10::OperatorHandle&, Stack stack, c10::Device) const override {
      seen_.push_back(stack[0].toTensor().clone());
      if (seen_.size() == 2) throw std::runtime_error("its second call fails");
      return {stack[0].toTensor().neg()};
    }
    std::vector<at::Tensor>& seen_;
  };
  std::vector<at::Tensor> seen;
  backends().add("relu_draws_test.default", std::make_unique<FailsOnItsSecondCall>(seen));
  const char* arguments = "((T([5], f32),), {})";
  nlohmann::json draws = nlohmann::json::array();
  for (int draw = 0; draw < 3; ++draw) {
    draws.push_back({{"arguments", arguments}, {"file", "draws_test.txt"}, {"line", 1}, {"seed", 7}, {"draw", draw}, {"salt", 11}});
  }
  const nlohmann::json call = {{"kind", "call"},         {"operator", "relu_draws_test.default"}, {"backend", "impl97"},
                               {"schema_name", "aten::relu"}, {"overload", ""}, {"device", "cpu"}, {"draws", draws}};
  const std::vector<nlohmann::json> answers = answers_to({call, call}, false);
  ASSERT_EQ(answers.size(), 5u) << "2 for the first request (its second draw's call failed), 3 for the second";
  EXPECT_FALSE(answers[0].contains("error")) << answers[0].dump();
  EXPECT_NE(answers[1].value("error", "").find("its second call fails"), std::string::npos) << answers[1].dump();
  for (size_t i = 2; i < 5; ++i) EXPECT_FALSE(answers[i].contains("error")) << answers[i].dump();
  // Each call saw its draw's inputs, in the draws' order: the first request's two, then all three.
  const c10::OperatorHandle relu = c10::Dispatcher::singleton().findSchemaOrThrow("aten::relu", "");
  const CaseSpec spec{"", arguments, "draws_test.txt", 1, 7, 0, ""};
  ASSERT_EQ(seen.size(), 5u);
  for (const auto& [call_index, draw] : std::vector<std::pair<size_t, int>>{{0, 0}, {1, 1}, {2, 0}, {3, 1}, {4, 2}}) {
    const at::Tensor made = materialize(relu.schema(), spec, c10::Device(c10::kCPU), draw, 11).at(0).toTensor();
    EXPECT_TRUE(at::equal(seen[call_index], made)) << "call " << call_index << " was not made on draw " << draw;
  }
  EXPECT_FALSE(at::equal(seen[2], seen[3])) << "two draws made the same values";
}

// A run back to back is one recipe and a count (the draws are the recipe's plus each call's
// index): a request of two recipes, none, no count or a count over the bound is refused with one
// error naming the form, and a 'run' without a prepared one is refused too. On the CPU the calls'
// inputs are over the memory file whose descriptor came before the request.
TEST(WorkerProtocol, APrepareRunIsACountOfCallsWithinTheBoundAndItsInputs) {
  class Negates : public Backend {
   public:
    Negates() : Backend("impl96", Kind::kKernel) {}
    c10::Device device(const Settings&) const override { return c10::Device(c10::kCPU); }
    Stack call(const c10::OperatorHandle&, Stack stack, c10::Device) const override { return {stack[0].toTensor().neg()}; }
  };
  backends().add("relu_prepare_test.default", std::make_unique<Negates>());
  const nlohmann::json recipe = {{"arguments", "((T([5], f32),), {})"}, {"file", "prepare_test.txt"}, {"line", 1},
                                 {"seed", 7}, {"draw", 1000}, {"salt", 11}};
  const nlohmann::json target = {{"kind", "prepare_run"}, {"operator", "relu_prepare_test.default"}, {"backend", "impl96"},
                                 {"schema_name", "aten::relu"}, {"overload", ""}, {"device", "cpu"}};
  std::vector<nlohmann::json> requests;
  for (const auto& [recipes, calls] : std::vector<std::pair<nlohmann::json, nlohmann::json>>{
           {nlohmann::json::array({recipe}), 4},  // a recipe, as on CUDA: no memory file
           {nlohmann::json::array(), 4},
           {nlohmann::json::array({recipe}), nullptr},
           {nlohmann::json::array({recipe}), worker::kMostBackToBackCalls + 1},
           {nlohmann::json::array({recipe}), 0}}) {
    nlohmann::json request = target;
    request["value_sets"] = recipes;
    if (!calls.is_null()) request["calls"] = calls;
    requests.push_back(request);
  }
  requests.push_back({{"kind", "run"}});
  const size_t bad = requests.size();
  // Three calls' inputs over a memory file: the run after it answers the last call's index; its
  // digests, under their request's key, are one list a call; its outputs come back as asked,
  // within the run, each the kernel's on that call's values in the file.
  std::vector<std::vector<c10::IValue>> inputs;
  for (int call = 0; call < 3; ++call) inputs.push_back({at::arange(5, at::kFloat) + 10 * call});
  std::vector<c10::IValue> tuples;
  for (const auto& stack : inputs) tuples.push_back(c10::ivalue::Tuple::create(stack));
  const SplitValues split(tuples);
  const std::shared_ptr<MemoryFile> file = MemoryFile::create(split.file_bytes());
  split.write_storages(file->data());
  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sockets), 0);
  device_share::send_descriptors(sockets[0], {file->descriptor()});
  nlohmann::json good = target;
  good["memory_file_bytes"] = file->bytes();
  good["calls"] = 3;
  requests.push_back(good);
  std::vector<std::vector<char>> payloads(requests.size());
  payloads.back() = split.head();
  requests.push_back({{"kind", "run"}});
  requests.push_back({{"kind", "run_digests"}});
  requests.push_back({{"kind", "run_digests"}, {"key", 99}});
  requests.push_back({{"kind", "run_output"}, {"first", 2}, {"count", 2}});
  requests.push_back({{"kind", "run_output"}, {"first", 0}, {"count", 3}});
  std::vector<std::vector<char>> answer_payloads;
  const std::vector<nlohmann::json> answers = answers_to(requests, false, std::nullopt, payloads, sockets[1], &answer_payloads);
  close(sockets[0]);
  close(sockets[1]);
  ASSERT_EQ(answers.size(), requests.size());
  EXPECT_FALSE(answers[bad].contains("error")) << answers[bad].dump();
  EXPECT_EQ(answers[bad + 1].value("value_set", -1), 2) << answers[bad + 1].dump();
  EXPECT_NE(answers[bad + 2].value("error", "").find("a 'run_digests' without its key"), std::string::npos)
      << answers[bad + 2].dump();
  ASSERT_TRUE(answers[bad + 3].contains("digests")) << answers[bad + 3].dump();
  EXPECT_EQ(answers[bad + 3]["digests"].size(), 3u) << answers[bad + 3].dump();
  EXPECT_NE(answers[bad + 4].value("error", "").find("within the last run's 3 calls"), std::string::npos)
      << answers[bad + 4].dump();
  ASSERT_FALSE(answers[bad + 5].contains("error")) << answers[bad + 5].dump();
  const std::vector<c10::IValue> outputs = load_values(answer_payloads[bad + 5]);
  ASSERT_EQ(outputs.size(), 3u);
  for (size_t call = 0; call < 3; ++call) {
    EXPECT_TRUE(at::equal(outputs[call].toTupleRef().elements()[0].toTensor(), inputs[call][0].toTensor().neg()))
        << "call " << call;
  }
  for (size_t i = 0; i + 1 < bad; ++i) {
    EXPECT_NE(answers[i].value("error", "").find("a 'prepare_run' without a count of calls from 1 to " +
                                                 std::to_string(worker::kMostBackToBackCalls) +
                                                 ", or without its inputs: a memory file"),
              std::string::npos)
        << "request " << i << ": " << answers[i].dump();
  }
  const nlohmann::json& unprepared = answers[bad - 1];
  EXPECT_NE(unprepared.value("error", "").find("a 'run' without a 'prepare_run' before it"), std::string::npos)
      << unprepared.dump();
}

TEST(WorkerProtocol, AWorkerGivenItsManifestAtStartLoadsNoOther) {
  const std::vector<nlohmann::json> answers =
      answers_to({{{"kind", "load"}, {"manifest", "/nonexistent/manifest.txt"}}, {{"kind", "list"}}}, false);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].value("error", ""), "'load' is a spare worker's first request only");
  EXPECT_TRUE(answers[1].contains("kernels")) << answers[1].dump();
}

TEST(WorkerProtocol, HostileMessagesAreErrors) {
  for (const std::string& text : {std::string("{\"kind\":\"call\"}\n"),                        // no size
                                  std::string("{\"payload_bytes\":99999999999999999999}\n"),  // over the limit
                                  std::string("{\"payload_bytes\":10,\"x\":1}\n"),             // size not last
                                  std::string("{\"payload_bytes\":10}\nabc")}) {               // cut short
    Pipe pipe;
    pipe.write_raw(text);
    pipe.close_writer();
    EXPECT_THROW(MessageReader(pipe.ends[0]).read(1000), ProtocolError) << text;
  }
}

TEST(WorkerProtocol, APayloadOverWhatTheRequestCanNeedIsRefusedFromItsHeader) {
  // A header that claims 32 GiB, and no byte of it sent: refused at once, nothing waited for or kept.
  Pipe pipe;
  pipe.write_raw("{\"payload_bytes\":34359738368}\n");
  try {
    MessageReader(pipe.ends[0]).read(5000, 1 << 20);
    FAIL() << "no error";
  } catch (const ProtocolError& error) {
    EXPECT_EQ(std::string(error.what()), "a payload of 34359738368 bytes, more than the 1048576 its request can need");
  }
  // Within the limit, the same reader takes it.
  Pipe small;
  write_message(small.ends[1], {"{}", std::vector<char>(100, 'x')});
  const std::optional<Message> read = MessageReader(small.ends[0]).read(5000, 100);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->payload.size(), 100u);
}

TEST(WorkerProtocol, AStacksBytesAreItsTensorsInListsAndTuplesToo) {
  const at::Tensor four = at::zeros({4}, at::kFloat), two = at::zeros({2}, at::kDouble);
  const Stack stack = {four, c10::List<at::Tensor>({two, two}), c10::ivalue::Tuple::create({c10::IValue(four)}), 7, at::Tensor()};
  EXPECT_EQ(stack_bytes(stack), 16u + 32u + 16u);
}

TEST(WorkerProtocol, ASilentWorkerTimesOut) {
  Pipe pipe;
  EXPECT_THROW(MessageReader(pipe.ends[0]).read(50), TimeoutError);
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

TEST(WorkerProtocol, AnUndefinedTensorAndAnEmptyOneRoundTrip) {
  const std::vector<c10::IValue> loaded = load_values(save_values({at::Tensor(), at::empty({0, 3}, at::kHalf)}));
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_FALSE(loaded[0].isTensor() && loaded[0].toTensor().defined());
  EXPECT_EQ(loaded[1].toTensor().sizes(), at::IntArrayRef({0, 3}));
  EXPECT_EQ(loaded[1].toTensor().scalar_type(), at::kHalf);
}

// The payload of one float tensor of 4 elements with its table rewritten by `edit`; the bytes
// after the table keep their layout (lengths and alignment recomputed).
std::vector<char> with_table(const std::function<void(nlohmann::json&)>& edit) {
  const std::vector<char> good = save_values({at::arange(4, at::kFloat)});
  auto u64 = [&](size_t at) {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= uint64_t{static_cast<unsigned char>(good[at + i])} << (8 * i);
    return value;
  };
  const uint64_t table_bytes = u64(0), structure_bytes = u64(8), storages = u64(16);
  nlohmann::json table = nlohmann::json::parse(good.begin() + 24, good.begin() + 24 + table_bytes);
  edit(table);
  const std::string text = table.dump();
  const auto aligned = [](size_t size) { return (size + 63) / 64 * 64; };
  const size_t old_data = aligned(24 + table_bytes + structure_bytes), new_data = aligned(24 + text.size() + structure_bytes);
  std::vector<char> out(new_data + (good.size() - old_data));
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
    out[8 + i] = static_cast<char>((structure_bytes >> (8 * i)) & 0xff);
    out[16 + i] = static_cast<char>((storages >> (8 * i)) & 0xff);
  }
  std::copy(text.begin(), text.end(), out.begin() + 24);
  std::copy(good.begin() + 24 + table_bytes, good.begin() + 24 + table_bytes + structure_bytes, out.begin() + 24 + text.size());
  std::copy(good.begin() + old_data, good.end(), out.begin() + new_data);
  return out;
}

TEST(WorkerProtocol, AHostileTensorTableIsAnError) {
  EXPECT_NO_THROW(load_values(with_table([](nlohmann::json&) {})));
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> edits = {
      {"a view past its storage", [](nlohmann::json& t) { t["tensors"][0]["sizes"] = {5}; }},
      {"an offset past its storage", [](nlohmann::json& t) { t["tensors"][0]["offset"] = 1; }},
      {"a negative stride", [](nlohmann::json& t) { t["tensors"][0]["strides"] = {-1}; }},
      {"a huge stride", [](nlohmann::json& t) { t["tensors"][0]["strides"] = {int64_t{1} << 62}; }},
      {"a view of 2^40 elements over one", [](nlohmann::json& t) {
         t["tensors"][0]["sizes"] = {int64_t{1} << 20, int64_t{1} << 20};
         t["tensors"][0]["strides"] = {0, 0};
       }},
      {"an unknown dtype", [](nlohmann::json& t) { t["tensors"][0]["dtype"] = 999; }},
      {"a storage not in the table", [](nlohmann::json& t) { t["tensors"][0]["storage"] = 7; }},
      {"a storage longer than the payload", [](nlohmann::json& t) { t["storages"][0]["bytes"] = 1 << 20; }},
      {"a storage on another device", [](nlohmann::json& t) { t["storages"][0]["device"] = "meta"; }},
      {"a table that is not one", [](nlohmann::json& t) { t = nlohmann::json::array(); }},
  };
  for (const auto& [what, edit] : edits) {
    EXPECT_THROW(load_values(with_table(edit)), ProtocolError) << what;
  }
}

TEST(KeptDraws, ADrawIsHandedOverOnceAsMadeAndAnotherCaseDropsIt) {
  KeptDraws kept;
  const at::Tensor first = at::arange(4, at::kFloat), second = at::arange(4, at::kFloat) * 2;
  kept.keep("case a", 0, {first, c10::IValue(int64_t{3})});
  kept.keep("case a", 1, {second, c10::IValue(int64_t{3})});
  first.fill_(-1);  // the call wrote its inputs after they were kept
  const std::optional<std::vector<c10::IValue>> taken = kept.take("case a", 0);
  ASSERT_TRUE(taken.has_value());
  ASSERT_EQ(taken->size(), 2u);
  EXPECT_TRUE(at::equal(taken->at(0).toTensor(), at::arange(4, at::kFloat)));
  EXPECT_EQ(taken->at(1).toInt(), 3);
  EXPECT_FALSE(kept.take("case a", 0).has_value()) << "a draw is handed over once";
  EXPECT_FALSE(kept.take("case b", 1).has_value()) << "another case's key takes nothing";
  kept.keep("case b", 0, {first});
  EXPECT_FALSE(kept.take("case a", 1).has_value()) << "a draw of another case drops the kept ones";
  ASSERT_TRUE(kept.take("case b", 0).has_value());
}

TEST(BackToBack, EnoughCallsToLastTheirTimeAndNoMoreDrawsThanTheirBound) {
  const uint64_t budget = kBackToBackBytes;
  EXPECT_EQ(back_to_back_calls(100e-6, 0, 0, budget), 250);                         // 25 ms of calls
  EXPECT_EQ(back_to_back_calls(10e-3, 0, 0, budget), kLeastBackToBackCalls);        // long calls: the least
  EXPECT_EQ(back_to_back_calls(1e-9, 0, 0, budget), kMostDistinctBackToBackCalls);  // a claim of nothing: the most
  EXPECT_EQ(back_to_back_calls(0, 0, 0, budget), kMostDistinctBackToBackCalls);
  EXPECT_EQ(back_to_back_calls(100e-6, budget / 10, 0, budget), 10);                // a draw a call: 10 fit
  EXPECT_EQ(back_to_back_calls(100e-6, budget * 2, 0, budget), 2);                  // at least 2
  // Every call's outputs are kept until judged: no more than their bound holds.
  EXPECT_EQ(back_to_back_calls(100e-6, 0, budget / 16, budget), 16);
  EXPECT_EQ(back_to_back_calls(100e-6, budget / 10, budget / 16, budget), 10);      // the tighter bound
  EXPECT_EQ(back_to_back_calls(100e-6, 0, budget * 3, budget), 2);                  // at least 2
}

TEST(BackToBack, ACudaRunHoldsAShareOfTheDevicesMemory) {
  EXPECT_EQ(back_to_back_budget_bytes(false, uint64_t{141} << 30), kBackToBackBytes) << "a CPU's budget is fixed";
  EXPECT_EQ(back_to_back_budget_bytes(true, uint64_t{64} << 30), uint64_t{4} << 30) << "a 16th of 64 GiB";
  EXPECT_EQ(back_to_back_budget_bytes(true, uint64_t{141} << 30), kMostCudaBackToBackBytes) << "within the most";
  EXPECT_EQ(back_to_back_budget_bytes(true, uint64_t{4} << 30), kBackToBackBytes) << "never under a CPU's";
  EXPECT_EQ(back_to_back_budget_bytes(true, 0), kBackToBackBytes) << "a device of unknown memory";
  // A 256 MiB relu of ~130 us a call on an H200: 32 calls back to back, 4 ms, past the round
  // trip's allowance (2 calls under the CPU's budget: half a millisecond, within it), and the
  // shared path's most taken off is a seventh of it at most.
  const uint64_t relu_bytes = uint64_t{256} << 20;
  EXPECT_EQ(back_to_back_calls(130e-6, relu_bytes, relu_bytes, back_to_back_budget_bytes(true, uint64_t{141} << 30)), 32);
  EXPECT_GT(32 * 130e-6, 20 * kRunSlackSeconds);
  EXPECT_GT(32 * 130e-6, 6 * kMostRunInputsPathSeconds);
}

TEST(BackToBack, DigestsSlowerThanTheSupervisorsOwnCountAsTheKernelsRun) {
  // Digests within the allowance of this process's own: the calls alone count.
  EXPECT_DOUBLE_EQ(counted_run_seconds(20e-3, 4e-3, 4e-3), 20e-3);
  EXPECT_DOUBLE_EQ(counted_run_seconds(20e-3, kDigestAllowance * 4e-3 + kDigestSlackSeconds, 4e-3), 20e-3);
  // Work finished after the answer to `run` (18 ms of it): counted, less what digests cost here.
  EXPECT_DOUBLE_EQ(counted_run_seconds(5e-3, 22e-3, 4e-3), 23e-3);
}

TEST(BackToBack, ARunFasterThanTheMachineCanDoItsWorkWasDoneBeforeTheClock) {
  // The 2-core machine's measured peaks; a 2048x2048 relu call reads and writes 32 MiB.
  Peaks peaks;
  peaks.bytes_per_second = 43e9;
  peaks.flops_per_second = 187e9;
  peaks.bound = false;  // measured: no bound on one call, but the run's floor uses them with its margin
  Work relu;
  relu.bytes = 2.0 * (4 << 20) * 4;
  relu.flops = 4 << 20;
  const double floor = run_floor_seconds(relu, 16, peaks, 320.0 * (1 << 20));
  EXPECT_NEAR(floor, 16 * relu.bytes / 43e9 / kRunFloorMargin, 1e-9);
  EXPECT_LT(floor, 10.8e-3 / 3) << "the reference's run (10.8 ms) is far above it";
  EXPECT_GT(floor, 10 * 188e-6) << "16 lookups (188 us) are far below it";
  // A run that fits in the cache, or under the least bytes, is bound by its flops alone.
  EXPECT_NEAR(run_floor_seconds(relu, 16, peaks, 1024.0 * (1 << 20)), 16 * relu.flops / 187e9 / kRunFloorMargin, 1e-12);
  EXPECT_NEAR(run_floor_seconds(relu, 4, peaks, 0), 4 * relu.flops / 187e9 / kRunFloorMargin, 1e-12);
  // A matrix product's flops bound it whatever its bytes: 512x512x512, 268 MFLOP a call.
  Work mm;
  mm.bytes = 3.0 * 512 * 512 * 4;
  mm.flops = 2.0 * 512 * 512 * 512;
  EXPECT_NEAR(run_floor_seconds(mm, 40, peaks, 0), 40 * mm.flops / 187e9 / kRunFloorMargin, 1e-12);
  // Unknown peaks bound nothing.
  EXPECT_EQ(run_floor_seconds(mm, 40, Peaks{}, 0), 0);
  // A GPU's datasheet bandwidth bounds a run that streams from its memory more tightly: an H100
  // (3.35 TB/s), 9 calls of the 8192x8192 relu (512 MiB each) took 1,721 us honestly.
  Peaks h100;
  h100.bytes_per_second = 3.35e12;
  h100.flops_per_second = 66.9e12;
  h100.bound = true;
  Work big_relu;
  big_relu.bytes = 2.0 * 8192 * 8192 * 4;
  big_relu.flops = 8192.0 * 8192;
  const double gpu_floor = run_floor_seconds(big_relu, 9, h100, 0);
  EXPECT_NEAR(gpu_floor, 9 * big_relu.bytes / 3.35e12 / kRunFloorBoundBytesMargin, 1e-12);
  EXPECT_LT(gpu_floor, 1721e-6 / 1.5) << "the honest run is well above it";
  EXPECT_GT(gpu_floor, 1721e-6 / 2) << "a run that precomputed and waited out the floor gains under 2x";
  // Its flops keep the wide margin: a float product on tensor cores beats the float figure.
  Work gpu_mm = mm;
  EXPECT_NEAR(run_floor_seconds(gpu_mm, 40, h100, 0), 40 * mm.flops / 66.9e12 / kRunFloorMargin, 1e-12);
}

TEST(BackToBack, DigestsAreOfEveryByteUnderTheirKey) {
  const at::Tensor values = at::arange(1000, at::kFloat);
  const std::vector<int64_t> digest = output_digests({values}, 7);
  ASSERT_EQ(digest.size(), 1u);
  EXPECT_EQ(output_digests({values.clone()}, 7), digest) << "the digest is of the values";
  EXPECT_NE(output_digests({values}, 8), digest) << "another key, another digest";
  at::Tensor changed = values.clone();
  changed[999] = -1.0f;  // in the last whole word
  EXPECT_NE(output_digests({changed}, 7), digest);
  const at::Tensor odd = at::arange(13, at::kByte);  // 5 bytes past the last whole word
  at::Tensor odd_changed = odd.clone();
  odd_changed[12] = 0;
  EXPECT_NE(output_digests({odd_changed}, 7), output_digests({odd}, 7));
  // Not a function of the words' sum: two words swapped for two of the same sum differ.
  const at::Tensor a = at::tensor({int32_t{5}, int32_t{9}}), b = at::tensor({int32_t{6}, int32_t{8}});
  EXPECT_NE(output_digests({a}, 7), output_digests({b}, 7));
}

TEST(BackToBack, ARunsOutputsComeInChunksBoundedByBytesAndDescriptors) {
  EXPECT_EQ(run_output_chunk(kRunOutputChunkBytes / 4, 1), 4);
  EXPECT_EQ(run_output_chunk(kRunOutputChunkBytes * 2, 1), 1);  // one call's outputs at least
  EXPECT_EQ(run_output_chunk(1024, 1), static_cast<int64_t>(device_share::kMaxDescriptors - 10));
  EXPECT_EQ(run_output_chunk(1024, 3), static_cast<int64_t>((device_share::kMaxDescriptors - 10) / 3));
  EXPECT_EQ(run_output_chunk(0, 0), static_cast<int64_t>(device_share::kMaxDescriptors - 10));
}

TEST(BackToBack, OnCudaTheAllowanceIsTheClaimAndAFewPerCentOnLongCalls) {
  // 250 calls of 100 us: 5 %, the run's slack and three times the round trips' spread (here
  // 20 us); no launch slack there.
  const double allowed = back_to_back_allowance(100e-6, 250, 20e-6);
  EXPECT_NEAR(allowed, 1.05 * 250 * 100e-6 + kRunSlackSeconds + kRoundTripSpreadAllowance * 20e-6, 1e-12);
  EXPECT_LT(allowed / (250 * 100e-6), 1.10);  // a forged time gains under 10 % there
  EXPECT_GT(back_to_back_allowance(100e-6, 250, 200e-6), allowed) << "a worker of uneven round trips is allowed more";
  EXPECT_EQ(back_to_back_allowance(100e-6, 250, -1e-6), back_to_back_allowance(100e-6, 250, 0)) << "no spread below none";
  EXPECT_EQ(back_to_back_allowance(100e-6, 250, 5e-3), back_to_back_allowance(100e-6, 250, 1)) << "nor beyond the most";
  EXPECT_NEAR(back_to_back_allowance(100e-6, 250, 1) - back_to_back_allowance(100e-6, 250, 0), kMostRoundTripSpreadSeconds, 1e-12);
  // Short calls get launch latency on top.
  EXPECT_GT(back_to_back_allowance(2e-6, 1000, 0), 1.05 * 1000 * 2e-6 + kRunSlackSeconds + 1000 * 9e-6);
  // The H100's honest relus (2026-12-05; round trips 20-24 us, spread 1-3 us): 9 calls of 176 us
  // ran in 1721 us less the round trip, 4 of 354 us in 1562 us. Each fits its own claim, and a
  // claim a tenth shorter fits neither (under the fixed millisecond of before, 0.42x did).
  EXPECT_GT(back_to_back_allowance(176.4e-6, 9, 3e-6), 1721e-6);
  EXPECT_GT(back_to_back_allowance(353.9e-6, 4, 3e-6), 1562e-6);
  EXPECT_LT(back_to_back_allowance(0.9 * 176.4e-6, 9, 3e-6), 1721e-6);
  EXPECT_LT(back_to_back_allowance(0.9 * 353.9e-6, 4, 3e-6), 1562e-6);
}

TEST(BackToBack, TheKernelsRunIsComparedLessItsWorkersRoundTrip) {
  constexpr double kNoPath = -1;
  EXPECT_DOUBLE_EQ(net_run_seconds(2e-3, 150e-6, kNoPath), 1.85e-3);
  EXPECT_DOUBLE_EQ(net_run_seconds(2e-3, -1, kNoPath), 2e-3) << "a round trip not measured takes nothing off";
  EXPECT_EQ(net_run_seconds(100e-6, 150e-6, kNoPath), kLeastNetRunSeconds) << "never none, nor less";
  // A round trip lengthened while the worker started (another kernel's load) takes off no more.
  EXPECT_DOUBLE_EQ(net_run_seconds(20e-3, 5e-3, kNoPath), 20e-3 - kMostRoundTripSeconds);
}

TEST(BackToBack, OnTheSharedPathTheRunIsComparedLessThePathsOwnCostTooWithinItsMost) {
  EXPECT_DOUBLE_EQ(net_run_seconds(2e-3, 20e-6, 300e-6), 1.68e-3);
  EXPECT_DOUBLE_EQ(net_run_seconds(2e-3, 20e-6, 0), 1.98e-3) << "a path of no cost takes nothing more off";
  // A path lengthened while the worker started (another kernel's load) takes off no more.
  EXPECT_DOUBLE_EQ(net_run_seconds(20e-3, 20e-6, 5e-3), 20e-3 - 20e-6 - kMostRunInputsPathSeconds);
  EXPECT_EQ(net_run_seconds(400e-6, 20e-6, 500e-6), kLeastNetRunSeconds) << "never none, nor less";
}

// Room on the GPU for the kernel asked next (kernel_workers.h, kGpuRoomShare): other workers
// are ended in the pool's order (least recently used first), each time the device's memory is
// read again, until half of it is free or none is left.
TEST(GpuRoom, OtherWorkersAreEndedInOrderUntilHalfTheMemoryIsFree) {
  constexpr uint64_t kTotal = 80;
  const std::vector<uint64_t> held = {5, 30, 20, 10};  // by the other workers, in the pool's order
  const auto run = [&](uint64_t free_at_start) {
    uint64_t free = free_at_start;
    std::vector<size_t> ended;
    const size_t count = make_gpu_room(
        held.size(), [&] { return std::pair<uint64_t, uint64_t>{free, kTotal}; },
        [&](size_t i) {
          ended.push_back(i);
          free += held[i];
        });
    EXPECT_EQ(count, ended.size());
    return ended;
  };
  EXPECT_EQ(run(40), std::vector<size_t>{}) << "half free: nobody is ended";
  EXPECT_EQ(run(39), std::vector<size_t>{0}) << "short: the least recently used first";
  EXPECT_EQ(run(10), (std::vector<size_t>{0, 1})) << "until half is free, no further";
  EXPECT_EQ(run(0), (std::vector<size_t>{0, 1, 2})) << "35 was not enough; 55 is";
  uint64_t never = 0;
  EXPECT_EQ(make_gpu_room(held.size(), [&] { return std::pair<uint64_t, uint64_t>{never, kTotal}; }, [](size_t) {}), held.size())
      << "memory that never comes back: every other worker, and no more";
}

TEST(BackToBack, ARunWithinTheKernelsClaimEndsTheBoundOnlyOnCudasBoundedCallsWithAReferenceNotCapped) {
  EXPECT_TRUE(back_to_back_ends_within_claim(/*cuda=*/true, /*short_cuda_calls=*/false, /*reference_capped=*/false));
  EXPECT_FALSE(back_to_back_ends_within_claim(true, false, true)) << "a reference counted at the supervisor's own: both runs";
  EXPECT_FALSE(back_to_back_ends_within_claim(true, true, false)) << "short calls: their launches, not their work";
  EXPECT_FALSE(back_to_back_ends_within_claim(false, false, false)) << "a CPU: the reference's runs always";
}

TEST(BackToBack, APairedSpeedupStandsWithinTheToleranceIsReplacedBeyondAndFailsFarBeyond) {
  constexpr bool kCuda = true, kCpu = false;
  constexpr double kLong = 1e-3, kShort = 5e-6;  // seconds a call
  EXPECT_EQ(judge_back_to_back(1.0, 1.0, kLong, kCuda), BackToBack::kAgrees);
  EXPECT_EQ(judge_back_to_back(0.5, 1.0, kLong, kCuda), BackToBack::kAgrees);  // a loss is the kernel's
  EXPECT_EQ(judge_back_to_back(1.049, 1.0, kLong, kCuda), BackToBack::kAgrees);
  EXPECT_EQ(judge_back_to_back(1.06, 1.0, kLong, kCuda), BackToBack::kCounted);
  EXPECT_EQ(judge_back_to_back(1.09, 1.0, kLong, kCpu), BackToBack::kAgrees);
  EXPECT_EQ(judge_back_to_back(1.11, 1.0, kLong, kCpu), BackToBack::kCounted);
  // A CPU's short calls are noisier back to back.
  EXPECT_EQ(judge_back_to_back(1.4, 1.0, kShort, kCpu), BackToBack::kAgrees);
  EXPECT_EQ(judge_back_to_back(1.6, 1.0, kShort, kCpu), BackToBack::kCounted);
  // CUDA's short calls back to back measure their launches: loosely bounded (kernel_workers.h).
  EXPECT_EQ(judge_back_to_back(1.9, 1.0, kShort, kCuda), BackToBack::kAgrees);
  EXPECT_EQ(judge_back_to_back(2.1, 1.0, kShort, kCuda), BackToBack::kCounted);
  EXPECT_EQ(judge_back_to_back(4.01, 1.0, kShort, kCuda), BackToBack::kDisagrees);
  // A reference made 1.9x slow in the kernel's process (or a kernel time cut so) is counted by the
  // supervisor's clock; past twice (four times on a CPU), the case fails.
  EXPECT_EQ(judge_back_to_back(1.9, 1.0, kLong, kCuda), BackToBack::kCounted);
  EXPECT_EQ(judge_back_to_back(2.01, 1.0, kLong, kCuda), BackToBack::kDisagrees);
  EXPECT_EQ(judge_back_to_back(2.4, 1.0, kLong, kCpu), BackToBack::kCounted);
  EXPECT_EQ(judge_back_to_back(4.01, 1.0, kShort, kCpu), BackToBack::kDisagrees);
  // A back-to-back figure that is no number counts as none: the paired speedup never stands on it.
  EXPECT_NE(judge_back_to_back(1.0, std::nan(""), kLong, kCuda), BackToBack::kAgrees);
}

TEST(OutputDigests, OneDigestPerTensorThatChangesWithItsValues) {
  constexpr uint64_t kKey = 0x1234;
  const at::Tensor a = at::arange(16, at::kFloat);
  const std::vector<int64_t> digests = output_digests({a, c10::IValue(3), a.t().contiguous()}, kKey);
  ASSERT_EQ(digests.size(), 2u);
  EXPECT_EQ(digests[0], digests[1]);
  EXPECT_NE(output_digests({a}, kKey)[0], output_digests({a + 1}, kKey)[0]);
  // Zeros too have a digest of their key: no sum made before it was known gives it.
  EXPECT_NE(output_digests({at::zeros({4})}, kKey)[0], output_digests({at::zeros({4})}, kKey + 1)[0]);
}

TEST(OutputDigests, TheBytesAfterTheLastWordAndAViewWithinAWordCount) {
  constexpr uint64_t kKey = 0x1234;
  // 5 halves: two 4-byte words and 2 bytes after them, each of which changes the digest.
  const at::Tensor halves = at::arange(5, at::kHalf);
  at::Tensor last_changed = halves.clone();
  last_changed[4] = 7;
  EXPECT_NE(output_digests({halves}, kKey)[0], output_digests({last_changed}, kKey)[0]);
  // A view starting 2 bytes into its storage has the digest of the same values copied out.
  const at::Tensor view = at::arange(17, at::kHalf).narrow(0, 1, 16);
  ASSERT_EQ(view.storage_offset(), 1);
  EXPECT_EQ(output_digests({view}, kKey)[0], output_digests({view.clone()}, kKey)[0]);
  // Words' keyed values wrap instead of overflowing: two alike sum to twice one.
  const at::Tensor ones = at::full({2}, -1, at::kInt);
  const uint64_t one = static_cast<uint64_t>(output_digests({at::full({1}, -1, at::kInt)}, kKey)[0]);
  EXPECT_EQ(static_cast<uint64_t>(output_digests({ones}, kKey)[0]), 2 * one);
}

}  // namespace
}  // namespace backendbench::worker

namespace backendbench {
namespace {

TEST(KernelImports, AnOperatorsOwnEntryPointsAreToldFromOthers) {
  EXPECT_TRUE(is_entry_point_of("at::cpu::relu(at::Tensor const&)", "relu"));
  EXPECT_TRUE(is_entry_point_of("at::native::relu_(at::Tensor&)", "relu"));
  EXPECT_TRUE(is_entry_point_of("at::_ops::relu::redispatch(c10::DispatchKeySet, at::Tensor const&)", "relu"));
  EXPECT_TRUE(is_entry_point_of("at::_ops::add_Tensor::call(at::Tensor const&, at::Tensor const&, c10::Scalar const&)", "add"));
  EXPECT_TRUE(is_entry_point_of("at::_ops::add__Tensor::call(at::Tensor&, at::Tensor const&, c10::Scalar const&)", "add"));
  EXPECT_TRUE(is_entry_point_of("at::cpu::add_out(at::Tensor&, at::Tensor const&, at::Tensor const&, c10::Scalar const&)", "add"));
  // Another operator whose name starts with the family's, and other members.
  EXPECT_FALSE(is_entry_point_of("at::_ops::max_pool2d::call(at::Tensor const&, c10::ArrayRef<long>)", "max"));
  EXPECT_FALSE(is_entry_point_of("at::cpu::relu6(at::Tensor const&)", "relu"));
  EXPECT_FALSE(is_entry_point_of("at::_ops::relu::schema()", "relu"));
  EXPECT_FALSE(is_entry_point_of("at::_ops::clamp_min::call(at::Tensor const&, c10::Scalar const&)", "relu"));
}

TEST(KernelImports, AKernelsFileIsFoundByItsNameInTheManifest) {
  const std::string manifest = ::testing::TempDir() + "/gallery_wrong.txt";
  std::ofstream(manifest) << "/b/libbackendbench_kernel_gallery_wrong_add___Tensor_implementation_1.so\n"
                          << "/b/libbackendbench_kernel_gallery_wrong_relu_implementation_1.so\n"
                          << "/b/libbackendbench_kernel_gallery_wrong_relu_implementation_12.so\n"
                          << "/b/libbackendbench_kernel_gallery_wrong_add_implementation_1.so\n"
                          << "python /k/relu/relu_implementation_3.py\n";
  EXPECT_EQ(kernel_file(manifest, "relu.default", "impl1"), "/b/libbackendbench_kernel_gallery_wrong_relu_implementation_1.so");
  EXPECT_EQ(kernel_file(manifest, "relu.default", "impl12"), "/b/libbackendbench_kernel_gallery_wrong_relu_implementation_12.so");
  EXPECT_EQ(kernel_file(manifest, "add_.Tensor", "impl1"), "/b/libbackendbench_kernel_gallery_wrong_add___Tensor_implementation_1.so");
  EXPECT_EQ(kernel_file(manifest, "add.Tensor", "impl1"), "/b/libbackendbench_kernel_gallery_wrong_add_implementation_1.so");
  EXPECT_EQ(kernel_file(manifest, "add.out", "impl1"), "/b/libbackendbench_kernel_gallery_wrong_add_implementation_1.so");  // served by add's
  EXPECT_EQ(kernel_file(manifest, "relu.default", "impl3"), "/k/relu/relu_implementation_3.py");  // a Python kernel's source
  EXPECT_EQ(kernel_file(manifest, "relu.default", "impl2"), "");
  EXPECT_EQ(kernel_file(manifest, "relu.default", "flag_gems"), "");
}

TEST(KernelImports, EachKernelsManifestLineIsFoundByItsTextSoThatItsWorkerLoadsItAlone) {
  const std::string manifest = ::testing::TempDir() + "/default.txt";
  std::ofstream(manifest) << "/b/libbackendbench_kernel_relu_implementation_1.so\n"
                          << "\n"  // blank lines are not lines a worker is told to load
                          << "/b/libbackendbench_kernel_relu_implementation_2.so\n"
                          << "python /k/relu_/relu__implementation_1.py\n"
                          << "python /k/add__Tensor/add__Tensor_implementation_v3.py\n"
                          << "op-library flag_gems /b/generated/op_libraries/flag_gems.txt\n";
  EXPECT_EQ(kernel_manifest_lines(manifest).size(), 5u);
  EXPECT_EQ(kernel_manifest_line(manifest, "relu.default", "impl1"), 0);
  EXPECT_EQ(kernel_manifest_line(manifest, "relu.default", "impl2"), 1);
  EXPECT_EQ(kernel_manifest_line(manifest, "relu.out", "impl2"), 1);        // served by relu's kernel
  EXPECT_EQ(kernel_manifest_line(manifest, "relu_.default", "impl1"), 2);   // its own folder's, first
  EXPECT_EQ(kernel_manifest_line(manifest, "relu_.default", "impl2"), 1);   // else relu's serves it
  EXPECT_EQ(kernel_manifest_line(manifest, "add.Tensor", "impl3"), 3);      // BackendBench's _v<N> name
  EXPECT_EQ(kernel_manifest_line(manifest, "mm.default", "flag_gems"), 4);
  EXPECT_EQ(kernel_manifest_line(manifest, "relu.default", "impl9"), -1);
  EXPECT_EQ(kernel_manifest_line(manifest, "relu.default", "aten"), -1);
  EXPECT_EQ(kernel_manifest_line(manifest, "not an operator", "impl1"), -1);
  EXPECT_EQ(kernel_file(manifest, "relu_.default", "impl1"), "/k/relu_/relu__implementation_1.py");  // a Python kernel's line
  EXPECT_EQ(kernel_file(manifest, "mm.default", "flag_gems"), "");  // an op library's: no file of a kernel
}

// Names in this executable's own data, as a kernel that looks ATen up at run time holds them:
// read back from the file by data_names. Volatile, so that each string is kept.
const char* volatile kLookedUpEntryPoint = "_ZN2at3cpu4reluERKNS_6TensorE";
const char* volatile kLookedUpNeighbour = "_ZN2at3cpu5relu6ERKNS_6TensorE";  // relu6: another operator
const char* volatile kOperatorInALongerString = "looked up as aten::relu_";

TEST(KernelImports, AnOperatorsDispatcherNameIsToldFromOthers) {
  EXPECT_TRUE(is_operator_name_of("aten::relu", "relu"));
  EXPECT_TRUE(is_operator_name_of("aten::relu_", "relu"));
  EXPECT_TRUE(is_operator_name_of("aten::add.Tensor", "add"));
  EXPECT_TRUE(is_operator_name_of("as_aten::add_.Tensor", "add"));  // the tail of a longer name
  EXPECT_FALSE(is_operator_name_of("aten::relu6", "relu"));
  EXPECT_FALSE(is_operator_name_of("aten::addmm", "add"));
  EXPECT_FALSE(is_operator_name_of("relu", "relu"));
  EXPECT_FALSE(is_operator_name_of("aten::clamp_min", "relu"));
}

TEST(KernelImports, NamesInALibrarysDataAreReadFromItsFile) {
  EXPECT_THROW(data_names(::testing::TempDir() + "/gallery_wrong.txt"), std::runtime_error);  // not ELF
  const std::vector<std::string> names = data_names("/proc/self/exe");
  const auto holds = [](const std::vector<std::string>& all, const std::string& name) {
    return std::find(all.begin(), all.end(), name) != all.end();
  };
  EXPECT_TRUE(holds(names, kLookedUpEntryPoint));
  EXPECT_TRUE(holds(names, "aten::relu_"));  // the name characters before the string's end
  const std::vector<std::string>& relu = fallback_names("/proc/self/exe", "relu.default");
  EXPECT_TRUE(holds(relu, "at::cpu::relu(at::Tensor const&)"));
  EXPECT_TRUE(holds(relu, "aten::relu_"));
  EXPECT_FALSE(holds(relu, "at::cpu::relu6(at::Tensor const&)"));
  EXPECT_EQ(&fallback_names("/proc/self/exe", "relu_.default"), &relu);  // one family, read once
  EXPECT_TRUE(holds(names, kLookedUpNeighbour));         // read, and told from relu's own above
  EXPECT_FALSE(holds(names, kOperatorInALongerString));  // only its last run of name characters
}

TEST(KernelImports, APythonKernelsRedispatchesAreFoundInItsText) {
  const std::string source = ::testing::TempDir() + "/relu_implementation_17.py";
  std::ofstream(source) << "import torch\n"
                        << "# redispatch in a comment calls nothing\n"
                        << "def relu_kernel_impl(x):\n"
                        << "    op = getattr(torch.ops.aten.relu.default, \"redispatch\")\n"
                        << "    return op._op_dk(key, x) if x.redispatched else op(x)  # not redispatch\n"
                        << "    print('# _op_dk')\n";  // a '#' within quotes: the rest is read
  EXPECT_EQ(python_redispatches(source),
            (std::vector<SourceName>{{4, 48, "redispatch"}, {5, 15, "_op_dk"}, {6, 14, "_op_dk"}}));
  EXPECT_THROW(python_redispatches(::testing::TempDir() + "/no such kernel.py"), std::runtime_error);
}

TEST(KernelImports, ALibrarysUndefinedSymbolsAreReadFromItsFile) {
  // This executable's own libtorch imports: libtorch_cpu is linked, and it imports from c10.
  EXPECT_THROW(undefined_symbols(::testing::TempDir() + "/gallery_wrong.txt"), std::runtime_error);  // not ELF
  std::ifstream maps("/proc/self/maps");
  std::string torch_cpu;
  for (std::string line; std::getline(maps, line);) {
    const size_t at = line.find('/');
    if (at != std::string::npos && line.find("libtorch_cpu.so") != std::string::npos) torch_cpu = line.substr(at);
  }
  ASSERT_FALSE(torch_cpu.empty());
  const std::vector<std::string> symbols = undefined_symbols(torch_cpu);
  EXPECT_TRUE(std::any_of(symbols.begin(), symbols.end(), [](const std::string& s) { return s.rfind("c10::", 0) == 0; }));
}

}  // namespace
}  // namespace backendbench
