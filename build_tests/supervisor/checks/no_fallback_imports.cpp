// A kernel's library must not import ATen's own implementation of the operator it replaces
// (at::cpu::relu, at::_ops::relu::redispatch, ...): through it the kernel can reach ATen past the
// worker's observer, which no_fallback relies on; nor name it, or the operator itself, in its data
// (a lookup at run time: dlsym, the dispatcher by name); nor a Python kernel's source name an
// operator's redispatch. Read by this process from the kernel's file (kernel_imports.h), never
// from the kernel's process.
#include "supervisor/check.h"
#include "backendbench/kernel_imports.h"

namespace backendbench {
namespace {

class NoFallbackImportsCheck : public Check {
 public:
  const char* name() const override { return "no_fallback_imports"; }
  bool applies_to(const Backend& backend) const override {
    return backend.kind() == Backend::Kind::kKernel && !kernel_file_of(backend).empty();
  }
  CheckFinding run(const CallRecord& call) const override {
    const std::string op = call.schema.name().substr(call.schema.name().find("::") + 2) +
                           (call.schema.overload_name().empty() ? ".default" : "." + call.schema.overload_name());
    const std::string file = kernel_file_of(call.backend);
    if (file.empty()) return {};  // not a kernel file of this process's workers
    const bool python = file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0;
    std::vector<std::string> imports;
    std::vector<std::string> names;
    std::vector<SourceName> redispatches;
    try {
      if (python) {
        redispatches = python_redispatches(file);
      } else {
        imports = fallback_imports(file, op);
        names = fallback_names(file, op);
      }
    } catch (const std::exception& error) {
      return {std::string(python ? "its source cannot be read: " : "its library's imports cannot be read: ") + error.what()};
    }
    if (!redispatches.empty()) {
      const SourceName& first = redispatches.front();
      return {"falls back to ATen: its source calls " + first.name + " (" + file.substr(file.find_last_of('/') + 1) + ":" +
              std::to_string(first.line) + ":" + std::to_string(first.column) +
              "), which runs an operator's ATen kernel below the observer"};
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
