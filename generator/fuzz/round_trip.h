// The property the parser fuzz targets check on every input the parser accepts: printing is
// canonical, so print → parse → print is the identity. A violation aborts, which libFuzzer
// reports as a finding with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "language/parser.h"
#include "language/printer.h"

namespace backendbench::fuzz {

[[noreturn]] inline void finding(const std::string& what, const std::string& first, const std::string& second) {
  std::fprintf(stderr, "round-trip finding: %s\n  first:  %s\n  second: %s\n", what.c_str(), first.c_str(), second.c_str());
  std::abort();
}

inline void check_round_trip(const parse::TraceFile& trace) {
  for (const parse::OperatorSection& section : trace.operators) {
    for (const parse::CaseLine& line : section.cases) {
      const std::string printed = parse::print(line.arguments);
      if (printed.find_first_of("\r\n") != std::string::npos) finding("printed arguments span lines", printed, "");
      parse::Arguments again;
      try {
        again = parse::parse_arguments(printed);
      } catch (const DiagnosticError& error) {
        finding("printed arguments do not parse", printed, error.what());
      }
      const std::string reprinted = parse::print(again);
      if (reprinted != printed) finding("print -> parse -> print changed the text", printed, reprinted);
    }
  }
  // The whole file too: the canonical text is a trace file that parses to the same text.
  const std::string text = parse::print(trace);
  const parse::ParseResult again = parse::parse_trace(text, "printed");
  if (!again.errors.empty()) finding("printed file does not parse", text, again.errors[0].str());
  if (parse::print(again.trace) != text) finding("printed file changed", text, parse::print(again.trace));
}

}  // namespace backendbench::fuzz
