// The case pipeline, as plain functions that return data: every front-end (the gtest body,
// ./bench, and later ones) calls these and only turns the verdict into its own form.
//
// check_case: for each draw (one for the reference backend, Settings::draws for others),
//   inputs (salted) → the reference on its copy → the backend on its copy, observed (ATen calls,
//   global state, threads, late device writes) → every registered check (check.h).
// time_case: check_case first (a case that fails any check is not timed and counts as failed);
//   then the reference and the backend interleaved on the same inputs (timing.h), the timed
//   results re-checked after every batch and the input values refreshed between batches; then
//   the roofline figures and flags.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backendbench/backend.h"
#include "backendbench/cases.h"
#include "backendbench/settings.h"
#include "backendbench/verdict.h"

namespace backendbench {

class Timer;

Verdict check_case(const OperatorSpec& op, const CaseSpec& spec, const Backend& backend, const Settings& settings);

// Figures for the reference backend alone (its own samples), or for another backend against the
// reference. `timer` is reused across cases (launch overhead is measured once per device).
Verdict time_case(const OperatorSpec& op, const CaseSpec& spec, const Backend& backend, const Settings& settings,
                  Timer& timer);

// no_cuda_device_reason: verdict.h.

}  // namespace backendbench
