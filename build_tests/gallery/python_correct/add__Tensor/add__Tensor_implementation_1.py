# Correct: add as a subtraction of the negated multiple (aten::sub), alpha keyword-only as in the
# schema, so the bridge must pass it by name.
import torch


def add__Tensor_kernel_impl(self, other, *, alpha=1):
    return torch.sub(self, other, alpha=-alpha)
