# Correct, written differently from ATen: relu as a clamp (aten::clamp, not aten::relu), which
# keeps NaN as relu does.
import torch


def relu_kernel_impl(x):
    return torch.clamp(x, min=0)
