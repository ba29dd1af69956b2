// Unit tests of roofline.h: bytes, FLOPs and peaks.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "backendbench/files.h"
#include "backendbench/operator_facts.h"
#include "backendbench/roofline.h"
#include "test_support.h"

namespace backendbench {
namespace {

using namespace backendbench::testing;

TEST(Roofline, BytesAndFlops) {
  const std::vector<c10::IValue> mm_inputs = {at::empty({64, 32}, at::kHalf), at::empty({32, 16}, at::kHalf)};
  const Work mm = work_of(facts_of("mm.default"), mm_inputs, {at::empty({64, 16}, at::kHalf)});
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 64 * 32 * 16);
  EXPECT_DOUBLE_EQ(mm.bytes, 2.0 * (64 * 32 + 32 * 16 + 64 * 16));
  EXPECT_EQ(mm.dtype, at::kHalf);
  // Elementwise: one operation per element; a broadcast (zero-stride) input is read once.
  const at::Tensor row = at::empty({1, 8}).expand({4, 8});
  const Work add = work_of(facts_of("add.Tensor"), {at::empty({4, 8}), row, 1}, {at::empty({4, 8})});
  EXPECT_DOUBLE_EQ(add.flops, 32);
  EXPECT_DOUBLE_EQ(add.bytes, 4.0 * (32 + 8 + 32));
}

TEST(Roofline, ConvolutionFlopsFromTheInputsAlone) {
  // Stride, padding and dilation differ per dimension; groups 2: each output meets 4/2 × 3 × 2 weights.
  const at::Tensor input = at::randn({2, 4, 11, 9}), weight = at::randn({6, 2, 3, 2});
  const std::vector<c10::IValue> arguments = {input, weight, c10::IValue(), std::vector<int64_t>{2, 1},
                                              std::vector<int64_t>{1, 0}, std::vector<int64_t>{1, 2},
                                              false, std::vector<int64_t>{0, 0}, 2};
  const at::Tensor output = at::convolution(input, weight, {}, {2, 1}, {1, 0}, {1, 2}, false, {0, 0}, 2);
  EXPECT_DOUBLE_EQ(matrix_flops(facts_of("convolution.default"), arguments), 2.0 * output.numel() * 2 * 3 * 2);
  std::vector<c10::IValue> transposed = arguments;
  transposed[1] = at::randn({4, 3, 3, 2});
  transposed[6] = true;
  EXPECT_DOUBLE_EQ(matrix_flops(facts_of("convolution.default"), transposed), 2.0 * input.numel() * 3 * 3 * 2);
  EXPECT_EQ(matrix_flops(facts_of("relu.default"), {input}), 0);
}

TEST(Roofline, PeaksOfKnownDevices) {
  const Peaks h200 = peaks_for_device_name("NVIDIA H200", at::kBFloat16);
  EXPECT_DOUBLE_EQ(h200.bytes_per_second, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.flops_per_second, 989.5e12);
  EXPECT_LT(peaks_for_device_name("NVIDIA H200", at::kFloat).flops_per_second, h200.flops_per_second);
  EXPECT_EQ(peaks_for_device_name("Some CPU", at::kFloat).bytes_per_second, 0);
}

TEST(Roofline, OnlyABoundMakesACaseSuspect) {
  Work work;
  work.bytes = 1e9;  // 1 GB in 1 ms: 1 TB/s
  work.flops = 1;
  Peaks datasheet;
  datasheet.bytes_per_second = 100e9;
  EXPECT_TRUE(beats_peaks(work, 1e-3, datasheet));
  EXPECT_FALSE(beats_peaks(work, 20e-3, datasheet));  // 50 GB/s, under the peak
  Peaks measured = datasheet;
  measured.bound = false;  // a CPU's measured bandwidth: data in its caches moves faster
  EXPECT_FALSE(beats_peaks(work, 1e-3, measured));
}

TEST(Roofline, AFloorTheReferenceBeatsToo) {
  // FlagGems' embedding on the H200 (2026-12-04): a [256008, 1024] f16 table, [2, 128] indices:
  // every input's bytes counted make a floor of about 104 us; the kernel took 4.4 us, ATen 4.5.
  Work gather;
  gather.bytes = 256008.0 * 1024 * 2 + 2 * 128 * 8 + 2 * 128 * 1024 * 2;
  gather.flops = 2 * 128 * 1024;
  const Peaks h200 = peaks_for_device_name("NVIDIA H200", at::kHalf);
  EXPECT_GT(honest_floor_seconds(gather, h200), 100e-6);
  EXPECT_FALSE(suspect_time(gather, 4.4e-6, 4.5e-6, h200));  // ATen beats it: it bounds nothing
  EXPECT_TRUE(suspect_time(gather, 4.4e-6, 0, h200));        // the reference not measured here
  EXPECT_TRUE(suspect_time(gather, 4.4e-6, 200e-6, h200));   // ATen within the floor: the kernel is not
  EXPECT_FALSE(suspect_time(gather, 120e-6, 200e-6, h200));  // within the floor
}

TEST(Roofline, TheHonestFloorIsTheSlowerPeakLessFivePerCent) {
  Work work;
  work.bytes = 1e9;
  work.flops = 4e12;
  Peaks datasheet;
  datasheet.bytes_per_second = 1e12;  // 1 ms of traffic
  datasheet.flops_per_second = 1e15;  // 4 ms of compute: the floor
  EXPECT_DOUBLE_EQ(honest_floor_seconds(work, datasheet), 4e-3 / 1.05);
  EXPECT_TRUE(beats_peaks(work, 3.7e-3, datasheet));
  EXPECT_FALSE(beats_peaks(work, 3.9e-3, datasheet));
  datasheet.flops_per_second = 0;  // unknown: the traffic alone
  EXPECT_DOUBLE_EQ(honest_floor_seconds(work, datasheet), 1e-3 / 1.05);
  Peaks measured = datasheet;
  measured.bound = false;
  EXPECT_EQ(honest_floor_seconds(work, measured), 0);
}

TEST(Roofline, CpuPeaksFileKeepsEachMachine) {
  Peaks first;
  first.bytes_per_second = 12e9;
  first.flops_per_second = 90e9;
  const std::string one = with_cpu_peaks("", "cpu A | 2 CPUs | 2 threads", first);
  Peaks second = first;
  second.bytes_per_second = 30e9;
  const std::string both = with_cpu_peaks(one, "cpu B | 16 CPUs | 16 threads", second);
  const std::optional<Peaks> a = cached_cpu_peaks(both, "cpu A | 2 CPUs | 2 threads");
  ASSERT_TRUE(a.has_value());
  EXPECT_DOUBLE_EQ(a->bytes_per_second, 12e9);
  EXPECT_DOUBLE_EQ(a->flops_per_second, 90e9);
  EXPECT_FALSE(a->bound);
  EXPECT_EQ(a->source, "measured: cpu A | 2 CPUs | 2 threads");
  EXPECT_DOUBLE_EQ(cached_cpu_peaks(both, "cpu B | 16 CPUs | 16 threads")->bytes_per_second, 30e9);
  // Another thread count is another machine; a malformed file or entry holds nothing.
  EXPECT_FALSE(cached_cpu_peaks(both, "cpu A | 2 CPUs | 1 threads").has_value());
  EXPECT_FALSE(cached_cpu_peaks("{not json", "cpu A | 2 CPUs | 2 threads").has_value());
  EXPECT_FALSE(cached_cpu_peaks(R"({"schema": "backendbench-cpu-peaks", "version": 1, "machines": {"cpu A": {"bytes_per_second": "fast", "flops_per_second": 1}}})",
                                "cpu A").has_value());
  // Written over a malformed file, the file holds the new machine alone.
  EXPECT_TRUE(cached_cpu_peaks(with_cpu_peaks("{not json", "cpu A", first), "cpu A").has_value());
}

TEST(Roofline, CpuPeaksAreMeasuredOnceAndKept) {
  const std::string folder = files::temporary_directory() + "/backendbench_cpu_peaks_test_" + std::to_string(::getpid());
  files::remove_tree(folder);
  const std::string path = folder + "/cache/cpu_peaks.json";
  Settings settings;
  settings.cpu_peaks_path = path;
  const Peaks measured = device_peaks(c10::Device(c10::kCPU), at::kFloat, settings);
  // Real figures of this machine: more than 100 MB/s and 100 MFLOP/s, less than 10 TB/s and
  // 100 TFLOP/s; shares of peak, not a bound.
  EXPECT_GT(measured.bytes_per_second, 1e8);
  EXPECT_LT(measured.bytes_per_second, 1e13);
  EXPECT_GT(measured.flops_per_second, 1e8);
  EXPECT_LT(measured.flops_per_second, 1e14);
  EXPECT_FALSE(measured.bound);
  EXPECT_EQ(measured.source, "measured: " + cpu_identity());
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::optional<Peaks> kept = cached_cpu_peaks(text, cpu_identity());
  ASSERT_TRUE(kept.has_value());
  EXPECT_DOUBLE_EQ(kept->bytes_per_second, measured.bytes_per_second);
  // The kept figures are what a later process reads: this one keeps them per path, so another
  // path holding other figures for this machine gives those, unmeasured.
  Peaks planted;
  planted.bytes_per_second = 1234e6;
  planted.flops_per_second = 5678e6;
  const std::string other = folder + "/other.json";
  files::write_whole(other, with_cpu_peaks("", cpu_identity(), planted));
  settings.cpu_peaks_path = other;
  EXPECT_DOUBLE_EQ(device_peaks(c10::Device(c10::kCPU), at::kFloat, settings).bytes_per_second, 1234e6);
  // The user's figures replace measured ones and are a bound.
  settings.peak_gbps = 50;
  const Peaks given = device_peaks(c10::Device(c10::kCPU), at::kFloat, settings);
  EXPECT_DOUBLE_EQ(given.bytes_per_second, 50e9);
  EXPECT_EQ(given.flops_per_second, 0);
  EXPECT_TRUE(given.bound);
  settings.peak_gbps = 0;
  settings.cpu_peaks_path = "none";
  EXPECT_EQ(device_peaks(c10::Device(c10::kCPU), at::kFloat, settings).bytes_per_second, 0);
  files::remove_tree(folder);
}

}  // namespace
}  // namespace backendbench
