// Syntax tree of the trace language: what one trace file says, with source positions.
// Immutable once parsed; printer.h turns any node back into canonical text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace backendbench::parse {

struct Value;

// T([shape], dtype[, stride][, device][, values=[...]]); a missing stride means contiguous.
// `values` (this project's extension; OpInfo samples and edge cases) are the elements of the
// storage the strided view reaches, in storage order: as many as 1 + sum((size-1)*stride),
// or none for an empty tensor. Without them the harness draws random values.
struct TensorValue {
  std::vector<int64_t> shape;
  std::string dtype;  // abbreviation: f16, bf16, i64, ...
  std::optional<std::vector<int64_t>> stride;
  std::optional<std::string> device;
  std::optional<std::vector<double>> values;  // exact for integers up to 2^53; -0.0, inf, nan kept
};

// Elements of storage a tensor of this shape and stride (contiguous when absent) reaches.
int64_t storage_extent(const std::vector<int64_t>& shape, const std::optional<std::vector<int64_t>>& stride);

struct SequenceValue {
  enum class Kind { kList, kTuple };
  Kind kind = Kind::kList;
  std::vector<Value> items;
};

struct IntValue { int64_t value = 0; };
struct FloatValue { double value = 0; };  // includes inf, -inf, nan
struct BoolValue { bool value = false; };
struct NoneValue {};
struct StringValue { std::string value; };
struct DtypeValue { std::string abbreviation; };       // bare f16 (or quoted 'f16')
struct TorchConstantValue { std::string name; };       // torch.<name>: dtypes, layouts, memory formats
struct DeviceValue { std::string spec; };              // torch.device('<spec>')

struct Value {
  std::variant<TensorValue, SequenceValue, IntValue, FloatValue, BoolValue, NoneValue,
               StringValue, DtypeValue, TorchConstantValue, DeviceValue>
      node;
  int column = 0;  // 1-based column of the value's first character in its line

  template <typename T> const T* as() const { return std::get_if<T>(&node); }
};

// The `((positional...), {'keyword': value})` part of a `cnt:` line.
struct Arguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
};

// The extra fields of a record of the dataset's JSON form (BackendBench's parquet/JSON export);
// absent for .txt traces.
struct DatasetFields {
  std::string uuid;
  bool included_in_benchmark = true;
  std::vector<std::string> why_excluded;
  bool runnable = true;
  bool is_synthetic = false;
  bool is_overhead_dominated_op = false;
  std::optional<double> runtime_ms;
  std::optional<double> relative_runtime_to_kernel_launch;
  std::vector<std::string> in_models;
};

struct CaseLine {
  int64_t count = 0;  // 0 marks a synthetic input
  Arguments arguments;
  int line = 0;       // JSON: the record's line (JSON Lines) or its 1-based index (an array)
  std::optional<DatasetFields> dataset;
};

struct OperatorSection {
  std::string name;  // as written, e.g. aten.add.Tensor
  int line = 0;
  std::vector<CaseLine> cases;
};

struct TraceFile {
  std::string path;
  std::vector<OperatorSection> operators;
};

// The dtype abbreviations of the trace language, in canonical order.
const std::vector<std::string>& dtype_abbreviations();
bool is_dtype_abbreviation(const std::string& text);
enum class DtypeKind { kBool, kInteger, kFloating, kComplex };
DtypeKind dtype_kind(const std::string& abbreviation);
// Names accepted after `torch.` (dtypes, layouts, memory formats).
bool is_torch_constant(const std::string& name);

}  // namespace backendbench::parse
