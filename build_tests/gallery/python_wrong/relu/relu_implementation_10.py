# Wrong: defines its function under another name.
# expect-failure: relu_implementation_10\.py:1:1: error: it defines no function relu_kernel_impl
import torch


def relu(x):
    return torch.clamp(x, min=0)
