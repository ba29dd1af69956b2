# Wrong: returns its input itself when relu would not change it.
# expect-failure: output 0 shares memory with argument 'self'
import torch


def relu_kernel_impl(x):
    if x.numel() == 0 or bool((x >= 0).all()):
        return x
    return torch.clamp(x, min=0)
