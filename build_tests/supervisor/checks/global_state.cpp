// A kernel must leave the process-wide state the reference depends on as it found it (thread
// count, TF32 and cuDNN flags, matmul precision, default dtype, grad mode, deterministic
// algorithms): changing it would change what the reference computes for later cases. The
// pipeline restores the state after every call, so one offender cannot taint the rest.
#include "supervisor/check.h"

namespace backendbench {
namespace {

class GlobalStateCheck : public Check {
 public:
  const char* name() const override { return "global_state"; }
  CheckFinding run(const CallRecord& call) const override {
    const std::vector<std::string>& changed = call.inside.state_changes;
    if (changed.empty()) return {};
    std::string list;
    for (const std::string& change : changed) list += (list.empty() ? "" : "; ") + change;
    return {"changed global state the reference depends on: " + list};
  }
};

}  // namespace

const Check& global_state_check() {
  static const GlobalStateCheck check;
  return check;
}

}  // namespace backendbench
