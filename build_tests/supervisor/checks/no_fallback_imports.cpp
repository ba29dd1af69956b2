// A kernel's library must not import ATen's own implementation of the operator it replaces
// (at::cpu::relu, at::_ops::relu::redispatch, ...): through it the kernel can reach ATen past the
// worker's observer, which no_fallback relies on; nor name it, or the operator itself, in its data
// (a lookup at run time: dlsym, the dispatcher by name). Read by this process from the library
// file (kernel_imports.h), never from the kernel's process.
#include "supervisor/check.h"
#include "backendbench/kernel_imports.h"

namespace backendbench {
namespace {

class NoFallbackImportsCheck : public Check {
 public:
  const char* name() const override { return "no_fallback_imports"; }
  bool applies_to(const Backend& backend) const override {
    return backend.kind() == Backend::Kind::kKernel && !kernel_library_of(backend).empty();
  }
  CheckFinding run(const CallRecord& call) const override {
    const std::string op = call.schema.name().substr(call.schema.name().find("::") + 2) +
                           (call.schema.overload_name().empty() ? ".default" : "." + call.schema.overload_name());
    const std::string library = kernel_library_of(call.backend);
    if (library.empty()) return {};  // not a kernel library of this process's workers
    std::vector<std::string> imports;
    std::vector<std::string> names;
    try {
      imports = fallback_imports(library, op);
      names = fallback_names(library, op);
    } catch (const std::exception& error) {
      return {std::string("its library's imports cannot be read: ") + error.what()};
    }
    if (!imports.empty()) {
      return {"falls back to ATen: its library imports " + imports.front() + ", ATen's own implementation of the operator it replaces"};
    }
    if (names.empty()) return {};
    const bool operator_name = names.front().rfind("aten::", 0) == 0;
    return {"falls back to ATen: its library names " + names.front() +
            (operator_name ? ", the operator it replaces, to find ATen's implementation in the dispatcher at run time"
                           : ", ATen's own implementation of the operator it replaces, to look it up at run time")};
  }
};

}  // namespace

const Check& no_fallback_imports_check() {
  static const NoFallbackImportsCheck check;
  return check;
}

}  // namespace backendbench
