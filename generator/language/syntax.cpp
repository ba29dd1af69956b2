// Vocabulary of the trace language: dtype abbreviations and torch.* constants.
#include "language/syntax.h"

#include <algorithm>
#include <set>

namespace backendbench::parse {

const std::vector<std::string>& dtype_abbreviations() {
  static const std::vector<std::string> abbreviations = {
      "bf16", "f16", "f32", "f64", "c32", "c64", "c128", "i8", "i16", "i32", "i64", "b8", "u8"};
  return abbreviations;
}

bool is_dtype_abbreviation(const std::string& text) {
  const auto& all = dtype_abbreviations();
  return std::find(all.begin(), all.end(), text) != all.end();
}

DtypeKind dtype_kind(const std::string& abbreviation) {
  if (abbreviation == "b8") return DtypeKind::kBool;
  if (abbreviation[0] == 'c') return DtypeKind::kComplex;
  if (abbreviation[0] == 'f' || abbreviation == "bf16") return DtypeKind::kFloating;
  return DtypeKind::kInteger;
}

int64_t storage_extent(const std::vector<int64_t>& shape, const std::optional<std::vector<int64_t>>& stride) {
  int64_t extent = 1;
  int64_t contiguous = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return 0;
    extent += (shape[i] - 1) * (stride ? (*stride)[i] : contiguous);
    contiguous *= shape[i];
  }
  return extent;
}

bool is_torch_constant(const std::string& name) {
  static const std::set<std::string> constants = {
      // dtypes
      "float16", "half", "bfloat16", "float32", "float", "float64", "double", "complex32",
      "chalf", "complex64", "cfloat", "complex128", "cdouble", "int8", "int16", "short",
      "int32", "int", "int64", "long", "uint8", "bool",
      // layouts
      "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn",
      // memory formats
      "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"};
  return constants.count(name) > 0;
}

}  // namespace backendbench::parse
