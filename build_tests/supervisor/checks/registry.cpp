// The one place checks are registered, in the order they run.
#include "supervisor/check.h"

namespace backendbench {

const Check& no_fallback_check();
const Check& global_state_check();
const Check& threads_left_check();
const Check& late_device_writes_check();
const Check& no_alias_check();
const Check& read_only_inputs_check();
const Check& written_arguments_check();
const Check& in_place_return_check();
const Check& outputs_check();
const Check& constant_outputs_check();
const Check& no_fallback_imports_check();
const Check& kernels_must_compute_check();

const std::vector<const Check*>& registered_checks() {
  static const std::vector<const Check*> checks = {
      &no_fallback_check(),     &global_state_check(),     &threads_left_check(),
      &late_device_writes_check(), &no_alias_check(),     &read_only_inputs_check(),
      &written_arguments_check(), &in_place_return_check(), &outputs_check(),
      &constant_outputs_check(), &no_fallback_imports_check(), &kernels_must_compute_check(),
  };
  return checks;
}

const Check* find_check(const std::string& name) {
  for (const Check* check : registered_checks()) {
    if (name == check->name()) return check;
  }
  return nullptr;
}

}  // namespace backendbench
