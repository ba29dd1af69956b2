# A Python kernel file that defines the wrong name: `sub`, not sub__Tensor_kernel_impl.
import torch


def sub(self, other, *, alpha=1):
    return torch.add(self, other, alpha=-alpha)
