// On CUDA, the call's work must be done once the current stream is done: work left on another
// stream is not timed by CUDA events on the current stream. Caught two ways (run_case.cpp):
// a pooled stream still busy when the current stream is done, and outputs that differ between
// the current stream's view and the view after the whole device has finished.
#include "supervisor/check.h"

namespace backendbench {
namespace {

class LateDeviceWritesCheck : public Check {
 public:
  const char* name() const override { return "late_device_writes"; }
  CheckFinding run(const CallRecord& call) const override {
    if (call.inside.late_device_writes.empty()) return {};
    return {"work left on another stream after it returned: " + call.inside.late_device_writes};
  }
};

}  // namespace

const Check& late_device_writes_check() {
  static const LateDeviceWritesCheck check;
  return check;
}

}  // namespace backendbench
