// A call must be done when it returns: a thread it started and left running may still be
// writing the outputs (they would be compared, or timed, before they are final).
#include "supervisor/check.h"

namespace backendbench {
namespace {

class ThreadsLeftCheck : public Check {
 public:
  const char* name() const override { return "threads_left"; }
  CheckFinding run(const CallRecord& call) const override {
    if (call.inside.threads_left.empty()) return {};
    return {"left " + std::to_string(call.inside.threads_left.size()) +
            " thread(s) running after it returned (first thread id " + std::to_string(call.inside.threads_left.front()) +
            "): work after the return is not part of the call"};
  }
};

}  // namespace

const Check& threads_left_check() {
  static const ThreadsLeftCheck check;
  return check;
}

}  // namespace backendbench
