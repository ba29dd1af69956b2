// Operations on a call's values (a stack of IValues) that treat every tensor in it alike:
// copies, traversal, and precision changes.
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace backendbench {

// A deep copy of inputs: every tensor gets its own storage with the same size, strides and
// offset (zero-stride views stay views), so the kernel cannot touch the reference's inputs.
std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& inputs);
// The same values without a copy: every strided tensor a new tensor over the same storage, size,
// strides and offset (other layouts are cloned). Re-pointing one of `inputs` (set_) leaves its
// view as it was; writing into a storage changes both.
std::vector<c10::IValue> view_inputs(const std::vector<c10::IValue>& inputs);

// Every tensor in `values`, in order: tensors, tensor lists, Tensor?[] lists (None left out)
// and tuples of these, flattened. May include undefined tensors.
std::vector<at::Tensor> tensors_in(const std::vector<c10::IValue>& values);

// The inputs with every floating tensor converted to float64 (own storage); for a reference
// computed more precisely than in the inputs' own dtypes.
std::vector<c10::IValue> to_double_precision(const std::vector<c10::IValue>& inputs);
// `values` with each floating tensor converted to the dtype of its counterpart in `like`
// (recursively through lists and tuples): a float64 result rounded as the operator would.
std::vector<c10::IValue> round_like(const std::vector<c10::IValue>& values, const std::vector<c10::IValue>& like);

bool has_floating_tensor(const std::vector<c10::IValue>& values);

// A strided tensor's whole storage from offset 0, as one flat view: what a copy of a tensor
// (zero-stride views included) must copy.
at::Tensor whole_storage(const at::Tensor& tensor);
// A storage's every byte as a flat uint8 tensor on its device (sharing the storage).
at::Tensor storage_bytes(const c10::Storage& storage);

}  // namespace backendbench
