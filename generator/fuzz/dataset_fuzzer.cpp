// libFuzzer target: the dataset's JSON reader (JSON Lines and arrays). Any input must give
// diagnostics, never an exception escaping, a crash or a sanitizer report; accepted records
// must round-trip through the printer like trace lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const backendbench::parse::ParseResult result = backendbench::parse::parse_dataset_json(text, "fuzz.jsonl");
  for (const backendbench::Diagnostic& error : result.errors) (void)error.str();
  backendbench::fuzz::check_round_trip(result.trace);
  return 0;
}
