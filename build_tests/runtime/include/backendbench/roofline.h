// What a case must move and compute, and the device's ceilings: the roofline counters of
// ./bench (achieved GB/s and TFLOP/s, % of peak, and a flag for times below the physical limit).
#pragma once

#include <ATen/ATen.h>

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
  std::string source;           // "BACKENDBENCH_PEAK_*", "table: NVIDIA H200", ...
};
// Settings::peak_gbps / peak_tflops (BACKENDBENCH_PEAK_*) override; else a table of known GPUs
// by name (dense tensor-core peak for f16/bf16, non-tensor-core for f32/f64); unknown elsewhere.
Peaks device_peaks(c10::Device device, at::ScalarType dtype, const Settings& settings);
// Pure part, for tests: the table's entry for a device name.
Peaks peaks_for_device_name(const std::string& name, at::ScalarType dtype);

}  // namespace backendbench
