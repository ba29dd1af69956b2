// Vocabulary of the trace language: dtype abbreviations and torch.* constants.
#include "language/syntax.h"

#include <algorithm>
#include <cctype>
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

std::optional<int64_t> storage_extent(const std::vector<int64_t>& shape,
                                      const std::optional<std::vector<int64_t>>& stride) {
  // PyTorch rejects sizes whose product overflows even when another size is 0, so do we.
  int64_t nonzero_product = 1;
  bool empty = false;
  for (int64_t size : shape) {
    if (size == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(nonzero_product, size, &nonzero_product)) {
      return std::nullopt;
    }
  }
  if (empty) return 0;
  int64_t extent = 1;
  int64_t elements = 1;  // also the contiguous stride of the next dimension out
  for (size_t i = shape.size(); i-- > 0;) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(shape[i] - 1, stride ? (*stride)[i] : elements, &reach) ||
        __builtin_add_overflow(extent, reach, &extent) || __builtin_mul_overflow(elements, shape[i], &elements)) {
      return std::nullopt;
    }
  }
  return extent;
}

int64_t dtype_size(const std::string& abbreviation) {
  if (abbreviation == "b8" || abbreviation == "i8" || abbreviation == "u8") return 1;
  if (abbreviation == "f16" || abbreviation == "bf16" || abbreviation == "i16") return 2;
  if (abbreviation == "f32" || abbreviation == "i32" || abbreviation == "c32") return 4;
  if (abbreviation == "c128") return 16;
  return 8;  // f64, i64, c64
}

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_device_spec(const std::string& text) {
  size_t i = 0;
  if (text.empty() || !std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  while (i < text.size() && is_identifier_char(text[i])) ++i;
  if (i == text.size()) return true;
  if (text[i] != ':' || i + 1 == text.size() || text.size() - i - 1 > 9) return false;
  for (++i; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

bool is_operator_name(std::string_view name) {
  int parts = 0;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t dot = name.find('.', start);
    const std::string_view part = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !is_identifier_start(part[0])) return false;
    for (char c : part) {
      if (!is_identifier_char(c)) return false;
    }
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts == 2 || parts == 3;
}

void append_escaped(std::string& out, char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (c == '\n') {
    out += "\\n";
  } else if (c == '\r') {
    out += "\\r";
  } else if (c == '\t') {
    out += "\\t";
  } else if (byte < 0x20 || byte == 0x7f) {
    const char* digits = "0123456789abcdef";
    out += std::string("\\x") + digits[byte >> 4] + digits[byte & 15];
  } else {
    out += c;
  }
}

std::string excerpt(std::string_view text) {
  std::string shown;
  size_t used = 0;
  for (; used < text.size() && shown.size() < Limits::kExcerptCharacters; ++used) append_escaped(shown, text[used]);
  if (used < text.size()) shown += "... (" + std::to_string(text.size()) + " characters)";
  return shown;
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
