// What a case must move and compute, and the device's ceilings: the roofline counters of
// ./bench (achieved GB/s and TFLOP/s, % of peak, and a flag for times below the physical limit).
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "backendbench/operator_facts.h"
#include "backendbench/settings.h"

namespace backendbench {

struct Work {
  double bytes = 0;  // compulsory traffic: each input element read once, each output element written once
  double flops = 0;  // matmul and convolution: 2 per multiply-add; other operators: 1 per element of the largest tensor
  at::ScalarType dtype = at::kFloat;  // of the first floating input: which compute peak applies
};
// FLOPs of matrix products (mm, addmm, bmm, baddbmm) and convolutions (forward, backward) from
// their inputs alone, by the operator's FlopFormula: 2 per multiply-add. 0 for other operators.
double matrix_flops(const OperatorFacts& facts, const std::vector<c10::IValue>& inputs);

Work work_of(const OperatorFacts& facts, const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& outputs);

struct Peaks {
  double bytes_per_second = 0;  // 0: unknown
  double flops_per_second = 0;  // for Work::dtype; 0: unknown
  std::string source;           // "BACKENDBENCH_PEAK_*", "table: NVIDIA H200", "measured: <cpu_identity>"
  // Whether no honest time can beat these figures (a datasheet's, or the user's): only then is a
  // faster case flagged `suspect`. A machine's measured figures give shares of peak, not a bound:
  // data in a CPU's caches moves faster than its measured memory bandwidth.
  bool bound = true;
};
// Settings::peak_gbps / peak_tflops (BACKENDBENCH_PEAK_*) override; else, on a GPU, a table of
// known GPUs by name (dense tensor-core peak for f16/bf16, non-tensor-core for f32/f64), and on
// the CPU this machine's measured peaks (cpu_peaks, Settings::cpu_peaks_path).
Peaks device_peaks(c10::Device device, at::ScalarType dtype, const Settings& settings);
// Pure part, for tests: the table's entry for a device name.
Peaks peaks_for_device_name(const std::string& name, at::ScalarType dtype);
// The least time in which `work` can honestly be done: at `peaks`, less 5 % (clocks and the
// datasheet's rounding); 0 for peaks that are not a bound.
double honest_floor_seconds(const Work& work, const Peaks& peaks);
// Whether `work` done in `seconds` is faster than that.
bool beats_peaks(const Work& work, double seconds, const Peaks& peaks);
// The roofline's `suspect` flag: a kernel time that beats the floor, where the reference's time,
// as this process measured it (0: not measured), does not beat it too. ATen beating the floor
// says the bytes counted overstate the work (every input's bytes are counted, and a gather reads
// only the rows it indexes: an embedding of 2x128 rows from a 524 MB table, 4.5 us on the H200
// against a floor of 104 us), so the floor bounds nothing there.
bool suspect_time(const Work& work, double kernel_seconds, double reference_seconds, const Peaks& peaks);

// What the CPU's measured peaks are kept under: its model, its logical CPUs and ATen's threads
// ("Intel(R) Xeon(R) ... | 2 CPUs | 2 threads").
std::string cpu_identity();
// The bytes of this CPU's last-level cache as the C library reports it (level 3, else level 2;
// 0 when unknown). On a virtual machine it is the host's, larger than this machine's share.
uint64_t last_level_cache_bytes();
// Measures this CPU with ATen's threads: memory bandwidth as the best of 5 copies of 256 MiB
// (bytes read and written, as Work counts them), f32 compute as the best of 5 products of two
// 1536x1536 matrices (2 FLOPs per multiply-add). About a second on 2 cores. Not a bound.
Peaks measure_cpu_peaks();
// The CPU's peaks from the file at `path` when it holds figures for cpu_identity(), else measured
// and added to it (written whole, so concurrent runs each leave a valid file); "none" as the
// path: unknown. Once per process.
Peaks cpu_peaks(const std::string& path);
// Pure parts, for tests: the figures `file_text` (a cpu_peaks file) holds for `identity`, if any
// (none from a malformed file); and `file_text` with `peaks` recorded for `identity`.
std::optional<Peaks> cached_cpu_peaks(const std::string& file_text, const std::string& identity);
std::string with_cpu_peaks(const std::string& file_text, const std::string& identity, const Peaks& peaks);

}  // namespace backendbench
