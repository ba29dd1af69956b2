// The one place checks are registered, in the order they run.
#include "backendbench/check.h"

#include "backendbench/tensor_values.h"

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

CompareOptions compare_options_for(const OperatorFacts& facts) {
  CompareOptions options;
  options.values = facts.undefined_values ? CompareValues::kMetadataOnly : CompareValues::kYes;
  options.metadata_only_outputs = facts.undefined_outputs;
  options.scale_ulps = facts.accumulates_in_any_order ? kAccumulationUlps : 0;
  return options;
}

Comparison compare_with_second_chance(const Stack& want, const Stack& got, const CompareOptions& options,
                                      const std::function<const Stack*()>& precise_want) {
  const Comparison first = compare_outputs(want, got, options);
  if (first.equal || !has_floating_tensor(want) || !precise_want) return first;
  const Stack* precise = precise_want();
  if (precise == nullptr) return first;
  const Comparison second = compare_outputs(round_like(*precise, want), got, options);
  return second.equal ? second : first;
}

}  // namespace backendbench
