# Wrong: ATen's own CPU relu, redispatched below the observer (an OpOverload's redispatch runs
# the dispatcher's kernel for the key it is given, with no RecordFunction); its source names it,
# which the supervisor reads.
# expect-failure: falls back to ATen: its source calls redispatch \(relu_implementation_17\.py:12:17\)
import torch

_BELOW_THE_OBSERVER = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def relu_kernel_impl(x):
    relu = torch.ops.aten.relu.default
    return relu.redispatch(_BELOW_THE_OBSERVER, x)
