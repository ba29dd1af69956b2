// Canonical text of syntax-tree nodes: the form the TorchBench traces use, so a parsed
// trace line prints back byte for byte, and other spellings print in that one form.
#pragma once

#include <string>

#include "language/syntax.h"

namespace backendbench::parse {

std::string print(const Value& value);
std::string print(const Arguments& arguments);  // ((positional...), {keywords})
std::string print(const TraceFile& trace);
// Python's repr() of a float: the shortest text that reads back as the same double.
std::string format_float(double value);

}  // namespace backendbench::parse
