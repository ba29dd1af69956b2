// Parser of the trace language (see traces/README.md for the grammar).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "language/diagnostic.h"
#include "language/syntax.h"

namespace backendbench::parse {

// Parses the text after `cnt: N, `. `file`, `line` and `first_column` place diagnostics.
// Throws DiagnosticError on the first problem.
Arguments parse_arguments(std::string_view text, const std::string& file = "<arguments>",
                          int line = 1, int first_column = 1);

struct ParseResult {
  TraceFile trace;
  std::vector<Diagnostic> errors;    // one per malformed line; empty when the file is clean
  std::vector<Diagnostic> warnings;  // accepted but suspect: a file without operators, an operator without cases
};

// Parses a whole trace file's text. Every malformed line yields one diagnostic and is left
// out of `trace`; the caller decides whether any error is fatal (the generator: always).
ParseResult parse_trace(std::string_view text, const std::string& path);

// The dataset's JSON form: an array of records, or JSON Lines (one record per line), each
// {op_name, args, count, is_synthetic, included_in_benchmark, why_excluded, runnable,
//  is_overhead_dominated_op, runtime_ms, relative_runtime_to_kernel_launch, uuid, in_models,
//  in_models_count}; op_name and args are required. Records of one operator are grouped into
// one section, in first-seen order. Every bad record is one diagnostic.
ParseResult parse_dataset_json(std::string_view text, const std::string& path);

// Adds the warnings parse_trace and parse_dataset_json give: no operators at all, or an
// operator without cases.
void warn_if_empty(ParseResult& result);

// Reads and parses a file by its extension: .json/.jsonl as the dataset's JSON form, anything
// else as trace text. An unreadable file is one diagnostic.
ParseResult parse_trace_file(const std::string& path);

}  // namespace backendbench::parse
