// Fallback detection and input checks; see checks.h.
#include "backendbench/checks.h"

#include <ATen/record_function.h>

#include "backendbench/harness.h"

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

bool same_values(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return false;
  // ATen's CPU equal/eq have no complex-half kernel: compare those as complex64.
  if (a.scalar_type() == at::kComplexHalf) return same_values(a.to(at::kComplexFloat), b.to(at::kComplexFloat));
  if (a.layout() != at::kStrided) return at::equal(a.to_dense(), b.to_dense());
  if (at::equal(a, b)) return true;
  if (!at::isFloatingType(a.scalar_type()) && !at::isComplexType(a.scalar_type())) return false;
  return ((a == b) | (a.isnan() & b.isnan())).all().item<bool>();
}

// Tensor and Tensor[] arguments. Not Tensor?[] (index lists): ATen's own kernels replace
// entries of the list they are given (_unsafe_masked_index stores clamped indices in it), which
// a caller never sees, since the list is built for the call.
bool is_tensor_argument(const c10::IValue& value) { return value.isTensor() || value.isTensorList(); }

}  // namespace

std::vector<std::string> record_operator_calls(const std::function<void()>& call) {
  thread_local std::vector<std::string>* sink = nullptr;
  std::vector<std::string> calls;
  sink = &calls;
  const at::CallbackHandle handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction& function) -> std::unique_ptr<at::ObserverContext> {
            if (sink != nullptr) {
              if (auto op = function.operator_name()) {
                sink->push_back(op->name + (op->overload_name.empty() ? "" : "." + op->overload_name));
              }
            }
            return nullptr;
          })
          .scopes({at::RecordScope::FUNCTION}));
  try {
    call();
  } catch (...) {
    at::removeCallback(handle);
    sink = nullptr;
    throw;
  }
  at::removeCallback(handle);
  sink = nullptr;
  return calls;
}

std::string find_fallback(const c10::FunctionSchema& schema, const std::vector<std::string>& calls) {
  const std::string family = base_of(schema.name());
  for (const std::string& call : calls) {
    if (base_of(call) == family) return call;
  }
  return "";
}

std::string find_aliased_output(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& inputs,
                                const std::vector<c10::IValue>& outputs) {
  const auto& returns = schema.returns();
  for (size_t r = 0; r < returns.size() && r < outputs.size(); ++r) {
    if (returns[r].alias_info() != nullptr || !outputs[r].isTensor()) continue;
    const at::Tensor& output = outputs[r].toTensor();
    if (!output.defined() || output.layout() != at::kStrided || output.numel() == 0) continue;
    for (size_t i = 0; i < inputs.size() && i < schema.arguments().size(); ++i) {
      if (!is_tensor_argument(inputs[i])) continue;
      for (const at::Tensor& input : tensors_in({inputs[i]})) {
        if (input.defined() && input.layout() == at::kStrided && input.numel() > 0 && output.is_alias_of(input)) {
          return "output " + std::to_string(r) + " shares memory with argument '" + schema.arguments()[i].name() +
                 "', but the schema returns a new tensor (no alias annotation)";
        }
      }
    }
  }
  return "";
}

std::vector<size_t> written_arguments(const c10::FunctionSchema& schema, const std::vector<std::string>& also_written) {
  std::vector<size_t> written;
  const auto& arguments = schema.arguments();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const bool annotated = arguments[i].alias_info() && arguments[i].alias_info()->isWrite();
    const bool listed = std::find(also_written.begin(), also_written.end(), arguments[i].name()) != also_written.end();
    if (annotated || listed) written.push_back(i);
  }
  return written;
}

std::string find_mutated_input(const c10::FunctionSchema& schema, const std::vector<size_t>& written,
                               const std::vector<c10::IValue>& before, const std::vector<c10::IValue>& after) {
  const auto& arguments = schema.arguments();
  for (size_t i = 0; i < arguments.size() && i < before.size() && i < after.size(); ++i) {
    if (std::find(written.begin(), written.end(), i) != written.end()) continue;
    if (!is_tensor_argument(before[i])) continue;
    const std::vector<at::Tensor> old_tensors = tensors_in({before[i]});
    const std::vector<at::Tensor> new_tensors = tensors_in({after[i]});
    for (size_t t = 0; t < old_tensors.size() && t < new_tensors.size(); ++t) {
      if (!same_values(old_tensors[t], new_tensors[t])) {
        return "argument '" + arguments[i].name() + "' is read-only in the schema but the kernel changed it";
      }
    }
  }
  return "";
}

}  // namespace backendbench
