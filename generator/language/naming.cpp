// Naming rules; see naming.h. Exhaustively tested in generator/tests/naming_test.cpp.
#include "language/naming.h"

#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <vector>

namespace backendbench::naming {
namespace {

const char* const kOverloadSeparator = "__";

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool is_name_part(const std::string& text) {
  return !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_') && is_identifier(text);
}

}  // namespace

bool is_identifier(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool matches_filter(const OperatorName& op, const std::string& filter) {
  const std::string text = filter.rfind(op.space + ".", 0) == 0 ? filter.substr(op.space.size() + 1) : filter;
  if (text.find('.') == std::string::npos) return op.base == text;
  return op.display() == text;
}

std::string default_overload(const std::string& base) {
  static const std::map<std::string, std::string> kBareNameOverloads = {
      {"add", "Tensor"}, {"mul", "Tensor"}, {"div", "Tensor"}, {"sub", "Tensor"}};
  auto found = kBareNameOverloads.find(base);
  return found == kBareNameOverloads.end() ? "default" : found->second;
}

std::string resolve_trace_alias(const std::string& trace_name) {
  static const std::map<std::string, std::string> kAliases = {{"aten.sum.SymInt", "aten.sum.dim_IntList"}};
  auto found = kAliases.find(trace_name);
  return found == kAliases.end() ? trace_name : found->second;
}

std::optional<OperatorName> OperatorName::from_trace(const std::string& text) {
  const std::vector<std::string> parts = split(text, '.');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  for (const auto& part : parts) {
    if (!is_name_part(part)) return std::nullopt;
  }
  return OperatorName{parts[0], parts[1], parts.size() == 3 ? parts[2] : "default"};
}

std::optional<OperatorName> OperatorName::from_user(const std::string& text) {
  const std::vector<std::string> parts = split(text, '.');
  for (const auto& part : parts) {
    if (!is_name_part(part)) return std::nullopt;
  }
  if (parts.size() == 1) return OperatorName{"aten", parts[0], default_overload(parts[0])};
  if (parts.size() == 2) return OperatorName{"aten", parts[0], parts[1]};
  if (parts.size() == 3) return OperatorName{parts[0], parts[1], parts[2]};
  return std::nullopt;
}

std::optional<OperatorName> OperatorName::from_folder(const std::string& folder) {
  if (!is_name_part(folder)) return std::nullopt;
  // Right to left: the overload is what follows the last "__", if that is a name that
  // starts with a letter (so "add___Tensor" is add_.Tensor and "__and__" stays bare).
  const size_t separator = folder.rfind(kOverloadSeparator);
  if (separator != std::string::npos && separator > 0) {
    const std::string overload = folder.substr(separator + 2);
    const std::string base = folder.substr(0, separator);
    if (!overload.empty() && std::isalpha(static_cast<unsigned char>(overload[0])) && is_name_part(base)) {
      return OperatorName{"aten", base, overload};
    }
  }
  return OperatorName{"aten", folder, default_overload(folder)};
}

std::string OperatorName::trace_name() const { return space + "." + base + "." + overload; }
std::string OperatorName::schema_name() const { return space + "::" + base; }
std::string OperatorName::schema_overload() const { return overload == "default" ? "" : overload; }
std::string OperatorName::display() const { return base + "." + overload; }
std::string OperatorName::folder() const { return base + kOverloadSeparator + overload; }
bool OperatorName::operator==(const OperatorName& other) const {
  return space == other.space && base == other.base && overload == other.overload;
}
bool OperatorName::operator<(const OperatorName& other) const { return trace_name() < other.trace_name(); }

std::string file_suite_name(const std::string& path) {
  std::string stem = path;
  while (stem.size() > 1 && stem.back() == '/') stem.pop_back();
  stem = stem.substr(stem.find_last_of('/') + 1);
  const size_t dot = stem.find('.');
  if (dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
  for (char& c : stem) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  if (stem.empty() || std::isdigit(static_cast<unsigned char>(stem[0]))) stem = "_" + stem;
  return stem;
}

std::string kernel_function(const std::string& folder) { return folder + "_kernel_impl"; }

std::string implementation_stem(const std::string& folder, int number) {
  return folder + "_implementation_" + std::to_string(number);
}

std::optional<int> implementation_number(const std::string& folder, const std::string& file_stem) {
  const std::string prefix = folder + "_implementation_";
  if (file_stem.rfind(prefix, 0) != 0) return std::nullopt;
  std::string digits = file_stem.substr(prefix.size());
  // The original's LLM backend writes <folder>_implementation_v<N>.py: the same number.
  if (digits.size() > 1 && digits[0] == 'v') digits.erase(0, 1);
  if (digits.empty() || digits.size() > 6 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return std::stoi(digits);
}

namespace {

// Whether `matches` holds for a line of `text`, given without its leading blanks.
bool any_line(const std::string& text, const std::function<bool(const std::string&)>& matches) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const size_t first = text.find_first_not_of(" \t", start);
    if (first != std::string::npos && first < end && matches(text.substr(first, end - first))) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

bool cuda_kernel_has_device_part(const std::string& source_text) {
  return any_line(source_text, [](const std::string& line) { return line[0] == '#' && line.find(kDevicePartMacro) != std::string::npos; });
}

bool python_kernel_needs_cuda(const std::string& source_text) {
  return any_line(source_text, [](const std::string& line) {
    for (const std::string statement : {"import triton", "from triton"}) {
      if (line.compare(0, statement.size(), statement) != 0) continue;
      if (line.size() == statement.size() || std::string(" \t.,\r").find(line[statement.size()]) != std::string::npos) return true;
    }
    return false;
  });
}

std::string variant_name(int implementation_number) { return "impl" + std::to_string(implementation_number); }

std::string part_name(int part, int parts) {
  return parts ? "part" + std::to_string(part) + "of" + std::to_string(parts) : "";
}

std::string pack_ctest_name(const std::string& suite, int pack, int packs) {
  return suite + "/pack" + std::to_string(pack) + "of" + std::to_string(packs);
}

std::string pack_result_file(const std::string& suite, int pack, int packs, const std::string& extension) {
  return pack_ctest_name(suite, pack, packs) + extension;
}

std::string ctest_name(const std::string& suite, const OperatorName& op, const std::string& backend, int part,
                       int parts) {
  return suite + "/" + op.display() + "/" + backend + (parts ? "/" + part_name(part, parts) : "");
}

std::string benchmark_name(const std::string& suite, const OperatorName& op, const std::string& case_name,
                           const std::string& backend) {
  return suite + "/" + op.display() + "/" + case_name + "/" + backend;
}

std::string gtest_suite(const std::string& suite, const OperatorName& op) { return suite + "/" + op.folder(); }

std::string gtest_test(const std::string& backend, const std::string& case_name) {
  return backend + "/" + case_name;
}

uint64_t stable_hash(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string case_name(const std::string& tensor_summary, const std::string& canonical_arguments) {
  constexpr size_t kMaxSummary = 48;
  std::string summary;
  for (char c : tensor_summary.empty() ? std::string("scalars") : tensor_summary) {
    summary += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  if (summary.size() > kMaxSummary) summary.resize(kMaxSummary);
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%08llx",
                static_cast<unsigned long long>(stable_hash(canonical_arguments) & 0xffffffffull));
  return summary + "_" + hash;
}

std::string result_file(const std::string& suite, const OperatorName& op, const std::string& backend,
                        const std::string& extension, int part, int parts) {
  return suite + "/" + op.display() + "/" + backend + (parts ? "." + part_name(part, parts) : "") + extension;
}

}  // namespace backendbench::naming
