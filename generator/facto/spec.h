// The FACTO suite's input specifications: for each operator overload, what each argument may be
// (a tensor's dtypes, ranks and shape dependencies, a dim within a tensor's rank, scalar values),
// read from the line-based spec files in generator/facto/specs/ (format: generator/facto/README.md).
// Plain data with the location of every line, so the expander and the schema check can say where.
#pragma once

#include <string>
#include <vector>

namespace backendbench::facto {

struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

enum class ArgumentKind {
  kTensor,  // a tensor: dtypes, rank, shape rule
  kDim,     // one dim of a tensor argument, negative dims included
  kDims,    // a list of dims of a tensor argument
  kBool,    // False, then True
  kValues,  // numbers, written as given (int, float, Scalar arguments)
  kDtype,   // a dtype argument (ScalarType), written as torch.<name>
  kLastSize,  // a one-element size list: the last dim of a tensor argument (a layer norm's normalized_shape)
  kNone,    // always None (an optional argument left to its meaning of "absent")
};

// How a tensor's shape follows another tensor argument's (the one named by `of`).
enum class ShapeRule {
  kFree,       // its own: every rank allowed, and the edge shapes (the operator's first tensor)
  kSame,       // the same shape
  kBroadcast,  // a shape that broadcasts with it: the same, fewer leading dims, size-1 dims, 0-dim, larger
  kInto,       // a shape that broadcasts into it (never larger: an in-place operator's other operand)
  kMatmul,     // [k, n] for a [m, k] one (mm's mat2)
  kBatchMatmul,  // [b, k, n] for a [b, m, k] one (bmm's mat2)
  kLastDim,    // 1-D, the size of its last dim (a layer norm's weight)
  kChannels,   // 1-D, the size of its dim 1 (a batch norm's weight, mean and variance)
};

struct ArgumentSpec {
  std::string name;
  ArgumentKind kind = ArgumentKind::kTensor;
  bool keyword = false;             // written in the keyword dict, not the positional tuple
  std::vector<std::string> dtypes;  // tensor: dtype abbreviations (f32, i64, b8, ...), in order; dtype kind: the values
  std::vector<std::string> promotions;  // dependent tensor: other dtypes to pair with its `of` tensor's (type promotion)
  std::string number;               // dependent tensor: a Python number it may also be (a wrapped scalar), or ""
  int rank_min = 0, rank_max = 4;   // tensor with a free shape
  ShapeRule shape = ShapeRule::kFree;
  std::string of;                   // the tensor argument a shape rule, dim or dims refers to
  bool allow_empty = true;          // free tensor: size-0 shapes are valid inputs
  bool allow_strided = true;        // non-contiguous views are valid inputs
  bool allow_expanded = true;       // free tensor: a zero-stride (expanded) view is a valid input (not where it is written)
  bool allow_specials = true;       // free tensor: NaN, ±inf, -0.0 and denormal values are valid inputs
  bool edges = true;                // the first free tensor: its edge shapes and ranks are valid inputs
  std::vector<int64_t> base;        // free tensor: its shape when given (base=2x3x8x8); its rank is then fixed
  bool has_base = false;
  std::vector<std::string> values;  // kValues: number texts, the first the default
  Location where;
};

struct OperatorSpec {
  std::string op;  // aten.add.Tensor
  std::vector<ArgumentSpec> arguments;
  Location where;
};

// Parses one spec file's text. Throws DiagnosticError at the first problem, located.
std::vector<OperatorSpec> parse_specs(const std::string& file, const std::string& text);

// The dtype abbreviations a group or abbreviation stands for ("float" → f32 f16 bf16 f64), or
// none when `name` is neither.
std::vector<std::string> dtype_group(const std::string& name);

}  // namespace backendbench::facto
