// Inputs of a case: the operator's handle, and the case's argument text turned into values for
// the operator's schema, drawn deterministically from the case's seed, the draw and the run's salt.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <vector>

#include "backendbench/cases.h"

namespace backendbench {

// The operator's handle in the dispatcher; throws std::runtime_error if it is not registered.
c10::OperatorHandle find_operator(const OperatorSpec& op);

// The seed of one draw of a case: the case's seed with the run's salt mixed in (salt 0 leaves
// it as it is), then, for draws after the first, an independent seed derived from it
// (SplitMix64). A kernel cannot know the values in advance without knowing the salt.
uint64_t draw_seed(uint64_t case_seed, int draw, uint64_t salt);

// Inputs for one call, in schema order (positional and keyword arguments, defaults filled).
// Tensor values are drawn from a generator seeded with draw_seed(), so the same (case, draw,
// salt) always gets the same values and different draws independent ones; values the case
// spells out (values=[...]) are used as given. "cuda" devices in the arguments follow
// `device`. Throws std::invalid_argument naming the argument when the text does not fit.
std::vector<c10::IValue> materialize(const c10::FunctionSchema& schema, const CaseSpec& spec, c10::Device device,
                                     int draw = 0, uint64_t salt = 0);

}  // namespace backendbench
