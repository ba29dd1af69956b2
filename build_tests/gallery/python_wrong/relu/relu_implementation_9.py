# Wrong: a syntax error; the entry fails at load with the file and line.
# expect-failure: relu_implementation_9\.py:7:[0-9]+: error: SyntaxError
import torch


def relu_kernel_impl(x):
    return torch.clamp(x, min=0
