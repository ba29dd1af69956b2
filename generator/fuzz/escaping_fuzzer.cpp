// libFuzzer target: the emitter's escaping. For any bytes, the C++ string literal, the CMake
// argument and the comment text it writes must be well-formed and, where they carry the text,
// decode to exactly those bytes. The decoders here follow the C++ and CMake grammars for the
// forms the emitter writes, independently of the emitter's code.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "emit/emitter.h"

namespace {

[[noreturn]] void finding(const char* what, const std::string& text) {
  std::fprintf(stderr, "escaping finding: %s (input of %zu bytes)\n", what, text.size());
  std::abort();
}

// A C++ string literal made of printable ASCII, \\ \" and three-digit octal escapes.
std::string decode_cpp_literal(const std::string& literal, const std::string& text) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') finding("literal not in quotes", text);
  std::string decoded;
  for (size_t i = 1; i + 1 < literal.size(); ++i) {
    const auto c = static_cast<unsigned char>(literal[i]);
    if (c < 0x20 || c >= 0x7f) finding("raw non-printable byte in a literal", text);
    if (c == '"') finding("unescaped quote in a literal", text);
    if (c != '\\') {
      decoded += static_cast<char>(c);
      continue;
    }
    if (i + 2 >= literal.size()) finding("escape at the end of a literal", text);
    const char next = literal[i + 1];
    if (next == '\\' || next == '"') {
      decoded += next;
      ++i;
    } else if (i + 3 < literal.size() - 1 && next >= '0' && next <= '3' && literal[i + 2] >= '0' && literal[i + 2] <= '7' &&
               literal[i + 3] >= '0' && literal[i + 3] <= '7') {
      decoded += static_cast<char>((next - '0') * 64 + (literal[i + 2] - '0') * 8 + (literal[i + 3] - '0'));
      i += 3;
    } else {
      finding("escape other than \\\\, \\\" or \\ooo", text);
    }
  }
  return decoded;
}

// A CMake bracket argument: [=*[ content ]=*], the first line break after the opening dropped.
std::string decode_cmake_bracket(const std::string& argument, const std::string& text) {
  if (argument.size() < 4 || argument[0] != '[') finding("not a bracket argument", text);
  size_t equals = 1;
  while (equals < argument.size() && argument[equals] == '=') ++equals;
  const std::string close = "]" + argument.substr(1, equals - 1) + "]";
  if (argument[equals] != '[') finding("malformed bracket opening", text);
  const size_t content = equals + 1;
  const size_t end = argument.find(close, content);
  if (end == std::string::npos || end + close.size() != argument.size()) finding("bracket closes early or not at all", text);
  std::string decoded = argument.substr(content, end - content);
  if (decoded.rfind("\r\n", 0) == 0) {
    decoded.erase(0, 2);
  } else if (!decoded.empty() && decoded[0] == '\n') {
    decoded.erase(0, 1);
  }
  return decoded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using namespace backendbench::emit;
  if (decode_cpp_literal(cpp_string_literal(text), text) != text) finding("C++ literal does not decode to its text", text);
  try {
    if (decode_cmake_bracket(cmake_argument(text), text) != text) finding("CMake argument does not decode to its text", text);
  } catch (const std::invalid_argument&) {
    if (text.find('\0') == std::string::npos) finding("CMake argument refused text without NUL", text);
  }
  // A // comment ends at a line break and continues after a backslash that ends a line: the
  // text may hold neither a control byte nor a backslash other than its own \xHH escapes.
  const std::string comment = comment_text(text);
  for (size_t i = 0; i < comment.size(); ++i) {
    const auto byte = static_cast<unsigned char>(comment[i]);
    if (byte < 0x20 || byte == 0x7f) finding("comment text holds a control byte", text);
    if (comment[i] == '\\' && (i + 1 == comment.size() || comment[i + 1] != 'x')) finding("comment text holds a bare backslash", text);
  }
  return 0;
}
