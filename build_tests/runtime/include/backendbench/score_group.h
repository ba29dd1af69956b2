// The group a verdict's backend is scored in, read from the backends this process registered
// (backend.h), behind a header without ATen's for the planner's scores (planner/scores.h).
#pragma once

#include <string>

namespace backendbench {

// "" for the reference (validates the harness, not scored); a calibration backend's own name
// (aten_self, aten_twice); "kernels" for a kernel and for a backend not registered here.
std::string score_group(const std::string& op_display, const std::string& backend);

}  // namespace backendbench
