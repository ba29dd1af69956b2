// On CUDA, the outputs must be final once the current stream is done: work left on another
// stream (which CUDA events on the current stream do not time) that still changes them is
// caught by comparing the outputs as the current stream leaves them with the outputs after
// the whole device has finished.
#include "backendbench/check.h"

namespace backendbench {
namespace {

class LateDeviceWritesCheck : public Check {
 public:
  const char* name() const override { return "late_device_writes"; }
  CheckFinding run(const CallRecord& call) const override {
    if (call.late_device_writes.empty()) return {};
    return {"its outputs changed after the current stream was done (work left on another stream): " +
            call.late_device_writes};
  }
};

}  // namespace

const Check& late_device_writes_check() {
  static const LateDeviceWritesCheck check;
  return check;
}

}  // namespace backendbench
