// The group a verdict's backend is scored in; see score_group.h.
#include "backendbench/score_group.h"

#include "language/naming.h"

namespace backendbench {

std::string score_group(const std::string& backend) {
  if (backend == naming::kReferenceBackend) return "";
  if (backend == naming::kSelfCalibrationBackend || backend == naming::kTwiceCalibrationBackend) return backend;
  return "kernels";
}

}  // namespace backendbench
