// Index-like arguments get valid values, derived from the other arguments of the call: random
// integers would index out of bounds (an error, or a crash inside ATen). Arguments with a value
// domain (normalised coordinates) get values inside it. The rules are data: each operator's
// rows live in its entry of the operator-facts table (operator_facts.cpp).
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>

#include <string>
#include <vector>

namespace backendbench {

enum class IndexBound {
  kSizeOfArgument,    // [0, <source>.size(dimension))
  kValueOfArgument,   // [0, <source>) where <source> is an int argument
  kSizeAtDimArgument, // [0, <source>.size(<dim argument>))
  kListPositions,     // a Tensor?[] whose i-th integer tensor indexes dimension i of <source>
  kBagOffsets,        // sorted offsets into <source> (the indices), starting at 0
  kOffsetToBag,       // for each index position, the bag it falls in, from <source> (the offsets)
  kPoolingIndices,    // what max_pool2d_with_indices returns for <source> with this call's window
  kUnitRange,         // floats in [-1, 1]: normalised coordinates (grid_sampler's grid)
  kSparseIndices,     // COO indices [sparse_dim, nnz]: row d in [0, <source>[d]) (<source>: the size list)
};

struct IndexRule {
  const char* argument;  // the index-like argument
  IndexBound bound;
  const char* source;    // the argument the bound comes from
  int64_t dimension = 0; // kSizeOfArgument: which dimension (negative: from the end)
  const char* dim_argument = nullptr;  // kSizeAtDimArgument
};

// Rewrites the index-like arguments of `stack` (in schema order) for `op_display` with values
// drawn from `generator`; other arguments, and those whose values the case gives (`given`, per
// schema argument; empty: none), stay as they are.
void apply_index_rules(const c10::FunctionSchema& schema, const std::string& op_display, std::vector<c10::IValue>& stack,
                       at::Generator& generator, const std::vector<bool>& given = {});

// relu.default for aten::relu with overload "".
std::string display_name(const c10::FunctionSchema& schema);

}  // namespace backendbench
