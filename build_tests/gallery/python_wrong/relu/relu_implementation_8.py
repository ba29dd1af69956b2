# Wrong: raises for the dtypes it does not handle; the traceback must reach the verdict.
# expect-failure: impl8 .* threw on relu\.default case .*Python exception.*relu_implementation_8\.py.*only float32 is implemented
import torch


def relu_kernel_impl(x):
    if x.dtype != torch.float32:
        raise NotImplementedError(f"only float32 is implemented, not {x.dtype}")
    return torch.clamp(x, min=0)
