// Checks on a kernel call beyond its outputs: that it did not fall back to the operator it
// replaces, that it left read-only inputs alone, and that it wrote what it must write.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>

#include <functional>
#include <string>
#include <vector>

namespace backendbench {

// The ATen operators (aten::name.overload) dispatched on this thread while `call` runs, in
// order; recorded with a thread-local RecordFunction callback.
std::vector<std::string> record_operator_calls(const std::function<void()>& call);

// The first call in `calls` that is the operator `schema` names, or a variant of it (in-place
// `name_`, or another overload such as `name.out`): a kernel that dispatches it fell back to
// ATen. "" when there is none.
std::string find_fallback(const c10::FunctionSchema& schema, const std::vector<std::string>& calls);

// Read-only arguments (not in `written`) of `before` and `after` must be equal, element for
// element (NaN equals NaN). Returns a message naming the first argument that changed.
std::string find_mutated_input(const c10::FunctionSchema& schema, const std::vector<size_t>& written,
                               const std::vector<c10::IValue>& before, const std::vector<c10::IValue>& after);

// Returned tensors the schema does not mark as aliases (no `Tensor(a)`) must not share storage
// with any input: a caller may write one without expecting the other to change. Returns a
// message naming the first output and argument that share memory, or "".
std::string find_aliased_output(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs,
                                const std::vector<c10::IValue>& outputs);

// Positions of the arguments the schema marks as written (Tensor(a!)), and of `also_written`
// (names of arguments the operator writes without saying so).
std::vector<size_t> written_arguments(const c10::FunctionSchema& schema, const std::vector<std::string>& also_written = {});

}  // namespace backendbench
