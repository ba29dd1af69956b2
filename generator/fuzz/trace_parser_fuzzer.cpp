// libFuzzer target: the trace-text parser. Any input must give diagnostics, never a crash,
// a sanitizer report or a hang; whatever parses must round-trip through the printer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const backendbench::parse::ParseResult result = backendbench::parse::parse_trace(text, "fuzz.txt");
  for (const backendbench::Diagnostic& error : result.errors) (void)error.str();
  backendbench::fuzz::check_round_trip(result.trace);
  return 0;
}
