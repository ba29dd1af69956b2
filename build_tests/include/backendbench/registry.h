// Plain-data description of generated suites: cases, operators and kernel variants, as the
// generated case tables define them. No tensors here; they are made inside test bodies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace c10 {
class KernelFunction;
}

namespace backendbench {

struct CaseSpec {
  const char* name;       // content-derived, [A-Za-z0-9_]
  const char* arguments;  // canonical trace text: ((args...), {kwargs})
  const char* file;       // trace file and line where the input first occurs
  int line;
  uint64_t seed;          // input values derive from it: deterministic per case
  int64_t count;          // occurrences in the traces
  const char* models;     // models it was traced in, ';'-separated
};

using KernelFactory = c10::KernelFunction (*)();

struct VariantSpec {
  const char* name;  // impl<N>
  KernelFactory factory;
  bool is_cuda;      // a .cu kernel: runs on CUDA tensors
  const char* source;
};

struct OperatorSpec {
  const char* suite;
  const char* display;          // relu.default
  const char* identifier;       // relu__default
  const char* schema_name;      // aten::relu
  const char* schema_overload;  // "" for default
  const CaseSpec* cases;
  size_t case_count;
  const VariantSpec* variants;
  size_t variant_count;
};

void register_operator(const OperatorSpec* spec);
const std::vector<const OperatorSpec*>& registered_operators();

struct OperatorRegistrar {
  explicit OperatorRegistrar(const OperatorSpec* spec) { register_operator(spec); }
};

}  // namespace backendbench
