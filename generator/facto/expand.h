// Expands FACTO specifications into cases: argument tuples in the trace language, each with the
// edge it probes. Deterministic: the same specs and bound give the same text, byte for byte.
//
// The cases vary one thing at a time from a base case (the first dtype, a rank-2 tensor where
// the rank allows, every other argument at its first value): each dtype of the first tensor, each
// rank it allows, the edge shapes (size-0, a size-1 dim, a transposed and an expanded view, an odd
// length past a vector width), NaN/±inf/-0.0/denormal values, the shapes a dependent tensor may
// broadcast from (fewer dims, size-1 dims, 0-dim, larger), a transposed or Python-number dependent,
// a dependent tensor's own and promotion dtypes, every dim of the rank (negative ones too), and
// each listed value. Cases are taken from these in turn, one from each, until `max_cases`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "facto/spec.h"

namespace backendbench::facto {

struct FactoCase {
  std::string probe;      // what it varies: "dtype i64", "empty", "other: broadcast: size-1 dim 0", "dim -1"
  std::string arguments;  // ((positional...), {keywords}), as in a trace line
};

std::vector<FactoCase> expand(const OperatorSpec& spec, size_t max_cases);

// The whole suite as a trace file: an @generated banner naming `sources`, then each operator's
// cases (`# facto: <probe>` above each `cnt: 1, ...` line).
std::string suite_text(const std::vector<OperatorSpec>& specs, size_t max_cases, const std::vector<std::string>& sources);

}  // namespace backendbench::facto
