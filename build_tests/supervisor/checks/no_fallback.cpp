// A kernel must not dispatch the operator it replaces (or its in-place/out= variants): that
// is ATen doing the work. Seen through RecordFunction observers of the calling thread and of
// every other thread while the call runs (a thread it starts).
#include "supervisor/check.h"

namespace backendbench {
namespace {

// aten::add_.Tensor → add; aten::add.out → add: the family an operator belongs to.
std::string base_of(std::string name) {
  const size_t separator = name.find("::");
  if (separator != std::string::npos) name = name.substr(separator + 2);
  const size_t dot = name.find('.');
  if (dot != std::string::npos) name = name.substr(0, dot);
  if (name.size() > 1 && name.back() == '_' && name.compare(0, 2, "__") != 0) name.pop_back();
  return name;
}

class NoFallbackCheck : public Check {
 public:
  const char* name() const override { return "no_fallback"; }
  bool applies_to(const Backend& backend) const override { return backend.kind() == Backend::Kind::kKernel; }
  CheckFinding run(const CallRecord& call) const override {
    const std::string family = base_of(call.schema.name());
    for (const std::string& dispatched : call.inside.dispatched) {
      if (base_of(dispatched) == family) {
        return {"falls back to ATen: it dispatches " + dispatched + ", the operator it replaces"};
      }
    }
    for (const std::string& dispatched : call.inside.dispatched_elsewhere) {
      if (base_of(dispatched) == family) {
        return {"falls back to ATen: it dispatches " + dispatched + ", the operator it replaces, on another thread"};
      }
    }
    return {};
  }
};

}  // namespace

const Check& no_fallback_check() {
  static const NoFallbackCheck check;
  return check;
}

}  // namespace backendbench
