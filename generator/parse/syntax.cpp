// Vocabulary of the trace language: dtype abbreviations and torch.* constants.
#include "parse/syntax.h"

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
