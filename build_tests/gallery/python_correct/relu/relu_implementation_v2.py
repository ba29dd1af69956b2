# Correct: the original's LLM file name (_implementation_v2) and calling convention
# (*args, **kwargs); maximum with a 0-dim zero propagates NaN and maps -inf to 0.
import torch


def relu_kernel_impl(*args, **kwargs):
    (x,) = args
    return torch.maximum(x, torch.zeros((), dtype=x.dtype, device=x.device))
