# Wrong: ignores alpha, right whenever alpha is 1, as in most traces.
# expect-failure: 'alpha': 2.*values differ beyond
import torch


def add__Tensor_kernel_impl(self, other, alpha=1):
    return torch.sub(self, torch.neg(other))
