// The group a verdict's backend is scored in, by the backend's name (language/naming.h): without
// ATen's headers or the backends' registry, for the planner's scores (planner/scores.h).
#pragma once

#include <string>

namespace backendbench {

// "" for the reference (validates the harness, not scored); a calibration backend's own name
// (aten_self, aten_twice); "kernels" for every other backend.
std::string score_group(const std::string& backend);

}  // namespace backendbench
