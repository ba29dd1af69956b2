// Copies, traversal and precision changes of a call's values; see tensor_values.h.
#include "backendbench/tensor_values.h"

#include <algorithm>
#include <functional>

namespace backendbench {
namespace {

at::Tensor clone_tensor(const at::Tensor& tensor) {
  if (!tensor.defined() || tensor.layout() != at::kStrided) return tensor.defined() ? tensor.clone() : tensor;
  const at::Tensor source = whole_storage(tensor);
  at::Tensor storage = at::empty_like(source);
  storage.copy_(source);
  at::Tensor copy = storage.as_strided(tensor.sizes(), tensor.strides(), tensor.storage_offset());
  if (tensor.unsafeGetTensorImpl()->is_wrapped_number()) copy.unsafeGetTensorImpl()->set_wrapped_number(true);
  return copy;
}

// Applies `map` to every tensor in `value` (a tensor, a tensor list, a Tensor?[] list, or a
// tuple of these), in order; `position` counts the tensors seen. Other values are returned as
// they are (numbers, dtypes, devices: immutable).
c10::IValue map_tensors(const c10::IValue& value, const std::function<at::Tensor(const at::Tensor&, size_t)>& map,
                        size_t& position) {
  if (value.isTensor()) return map(value.toTensor(), position++);
  if (value.isTensorList()) {
    std::vector<at::Tensor> tensors;
    for (const at::Tensor& tensor : value.toTensorVector()) tensors.push_back(map(tensor, position++));
    return tensors;
  }
  if (value.isTuple()) {
    std::vector<c10::IValue> items;
    for (const c10::IValue& item : value.toTupleRef().elements()) items.push_back(map_tensors(item, map, position));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (value.isList() && value.toListRef().size() > 0 && value.type()->containedType(0)->kind() == c10::TypeKind::OptionalType) {
    c10::List<std::optional<at::Tensor>> tensors;
    for (const c10::IValue& item : value.toListRef()) {
      tensors.push_back(item.isNone() ? std::optional<at::Tensor>() : map(item.toTensor(), position++));
    }
    return tensors;
  }
  return value;
}

std::vector<c10::IValue> map_all_tensors(const std::vector<c10::IValue>& values,
                                         const std::function<at::Tensor(const at::Tensor&, size_t)>& map) {
  std::vector<c10::IValue> mapped;
  mapped.reserve(values.size());
  size_t position = 0;
  for (const c10::IValue& value : values) mapped.push_back(map_tensors(value, map, position));
  return mapped;
}

}  // namespace

std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& inputs) {
  return map_all_tensors(inputs, [](const at::Tensor& tensor, size_t) { return clone_tensor(tensor); });
}

std::vector<c10::IValue> view_inputs(const std::vector<c10::IValue>& inputs) {
  return map_all_tensors(inputs, [](const at::Tensor& tensor, size_t) {
    if (!tensor.defined() || tensor.layout() != at::kStrided) return clone_tensor(tensor);
    at::Tensor view = at::empty({0}, tensor.options()).set_(tensor.storage(), tensor.storage_offset(), tensor.sizes(), tensor.strides());
    if (tensor.unsafeGetTensorImpl()->is_wrapped_number()) view.unsafeGetTensorImpl()->set_wrapped_number(true);
    return view;
  });
}

std::vector<at::Tensor> tensors_in(const std::vector<c10::IValue>& values) {
  std::vector<at::Tensor> tensors;
  map_all_tensors(values, [&](const at::Tensor& tensor, size_t) {
    tensors.push_back(tensor);
    return tensor;
  });
  return tensors;
}

std::vector<c10::IValue> to_double_precision(const std::vector<c10::IValue>& inputs) {
  return map_all_tensors(inputs, [](const at::Tensor& tensor, size_t) {
    if (!tensor.defined() || !at::isFloatingType(tensor.scalar_type())) return clone_tensor(tensor);
    at::Tensor copy = tensor.to(at::kDouble, /*non_blocking=*/false, /*copy=*/true);
    if (tensor.unsafeGetTensorImpl()->is_wrapped_number()) copy.unsafeGetTensorImpl()->set_wrapped_number(true);
    return copy;
  });
}

std::vector<c10::IValue> round_like(const std::vector<c10::IValue>& values, const std::vector<c10::IValue>& like) {
  const std::vector<at::Tensor> targets = tensors_in(like);
  return map_all_tensors(values, [&](const at::Tensor& tensor, size_t index) {
    if (index >= targets.size() || !tensor.defined() || !targets[index].defined()) return tensor;
    const at::ScalarType dtype = targets[index].scalar_type();
    return at::isFloatingType(tensor.scalar_type()) && at::isFloatingType(dtype) ? tensor.to(dtype) : tensor;
  });
}

at::Tensor whole_storage(const at::Tensor& tensor) {
  const int64_t elements = static_cast<int64_t>(tensor.storage().nbytes() / tensor.element_size());
  return tensor.as_strided({elements}, {1}, 0);
}

at::Tensor storage_bytes(const c10::Storage& storage) {
  const int64_t size = static_cast<int64_t>(storage.nbytes());
  return at::empty({0}, at::TensorOptions().dtype(at::kByte).device(storage.device())).set_(storage, 0, {size}, {1});
}

bool has_floating_tensor(const std::vector<c10::IValue>& values) {
  const std::vector<at::Tensor> tensors = tensors_in(values);
  return std::any_of(tensors.begin(), tensors.end(),
                     [](const at::Tensor& tensor) { return tensor.defined() && at::isFloatingType(tensor.scalar_type()); });
}

}  // namespace backendbench
