// Syntax tree of the trace language: what one trace file says, with source positions.
// Immutable once parsed; printer.h turns any node back into canonical text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <string_view>
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

// Elements of storage a tensor of this shape and stride (contiguous when absent) reaches, for
// non-negative sizes and strides; nullopt when it, or the element count, does not fit in 63 bits.
std::optional<int64_t> storage_extent(const std::vector<int64_t>& shape,
                                      const std::optional<std::vector<int64_t>>& stride);
// Bytes per element of a dtype abbreviation.
int64_t dtype_size(const std::string& abbreviation);

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

// A tensor held by value semantics on the heap: most nodes of a trace are numbers in lists, and
// boxing the one large alternative keeps every Value at 48 bytes instead of 176.
class BoxedTensor {
 public:
  BoxedTensor(TensorValue tensor) : tensor_(std::make_unique<TensorValue>(std::move(tensor))) {}
  BoxedTensor(const BoxedTensor& other) : tensor_(std::make_unique<TensorValue>(*other.tensor_)) {}
  BoxedTensor(BoxedTensor&&) noexcept = default;
  BoxedTensor& operator=(const BoxedTensor& other) {
    tensor_ = std::make_unique<TensorValue>(*other.tensor_);
    return *this;
  }
  BoxedTensor& operator=(BoxedTensor&&) noexcept = default;
  const TensorValue& operator*() const { return *tensor_; }

 private:
  std::unique_ptr<TensorValue> tensor_;
};

struct Value {
  std::variant<NoneValue, BoxedTensor, SequenceValue, IntValue, FloatValue, BoolValue,
               StringValue, DtypeValue, TorchConstantValue, DeviceValue>
      node;
  int column = 0;  // 1-based column of the value's first character in its line

  template <typename T> const T* as() const {
    if constexpr (std::is_same_v<T, TensorValue>) {
      const auto* boxed = std::get_if<BoxedTensor>(&node);
      return boxed != nullptr ? &**boxed : nullptr;
    } else {
      return std::get_if<T>(&node);
    }
  }
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
// Identifiers of the trace language (names, operator-name parts, device types): a letter or
// '_' first, then letters, digits and '_'.
bool is_identifier_start(char c);
bool is_identifier_char(char c);

// A device as torch.device takes it: a type (letters, digits, '_'; a letter first) and an
// optional ':<index>', as in cpu, cuda, cuda:1.
bool is_device_spec(const std::string& text);
// namespace.name[.overload], each part an identifier, as in aten.add.Tensor.
bool is_operator_name(std::string_view name);

// What the parser accepts at most; beyond each, input gets one located error (traces/README.md).
struct Limits {
  static constexpr size_t kLineBytes = size_t{1} << 26;        // one trace line or JSON record: 64 MiB
  static constexpr int kNesting = 64;                          // lists, tuples and T(...) inside each other
  static constexpr int64_t kValuesPerLine = 1'000'000;         // values in a line, outside values=[...]
  static constexpr size_t kNumberCharacters = 400;             // one number literal
  static constexpr size_t kExcerptCharacters = 40;             // offending text quoted in a message
};

// Appends `c` as Python's repr writes it inside a string: \n \r \t, other control bytes as
// \xHH, anything else as is (quotes and backslashes are the caller's).
void append_escaped(std::string& out, char c);

// `text` for a message: at most Limits::kExcerptCharacters, control characters escaped, and
// the full length named when it was cut.
std::string excerpt(std::string_view text);

}  // namespace backendbench::parse
