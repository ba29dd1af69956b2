// The strict policy (--kernels-must-compute, off by default): a kernel must compute its answer,
// not have ATen's computing operators do it (the hack models find most often: high-level
// PyTorch instead of a kernel). Allocating, viewing, filling and copying are allowed
// (operator_facts.h: computes_nothing). Seen from inside the kernel's process, so it can only
// fail a case.
#include "supervisor/check.h"

namespace backendbench {
namespace {

class KernelsMustComputeCheck : public Check {
 public:
  const char* name() const override { return "kernels_must_compute"; }
  bool applies_to(const Backend& backend) const override { return backend.kind() == Backend::Kind::kKernel; }
  CheckFinding run(const CallRecord& call) const override {
    if (!call.kernels_must_compute || call.inside.aten_computing.empty()) return {};
    std::string names;
    for (const std::string& name : call.inside.aten_computing) names += (names.empty() ? "" : ", ") + name;
    return {"its work is done by ATen: it calls " + names + " (" +
            std::to_string(static_cast<int>(100 * std::max(0.0, call.inside.aten_share) + 0.5)) +
            " % of its time); --kernels-must-compute expects a kernel that computes its answer itself (allocating, "
            "viewing, filling and copying are allowed)"};
  }
};

}  // namespace

const Check& kernels_must_compute_check() {
  static const KernelsMustComputeCheck check;
  return check;
}

}  // namespace backendbench
