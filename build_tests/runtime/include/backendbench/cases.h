// Plain-data description of generated suites: operators and their cases, as the generated
// case tables define them. No tensors, and no kernels: which backends run an operator is the
// backend registry's business (backend.h), so adding a kernel never changes a case table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

struct OperatorSpec {
  const char* suite;
  const char* display;          // relu.default
  const char* identifier;       // relu__default
  const char* schema_name;      // aten::relu
  const char* schema_overload;  // "" for default
  const CaseSpec* cases;
  size_t case_count;
};

void register_operator(const OperatorSpec* spec);
const std::vector<const OperatorSpec*>& registered_operators();

struct OperatorRegistrar {
  explicit OperatorRegistrar(const OperatorSpec* spec) { register_operator(spec); }
};

}  // namespace backendbench
