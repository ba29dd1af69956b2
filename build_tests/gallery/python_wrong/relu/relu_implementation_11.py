# Wrong: caches its first result per shape and dtype; the second draw must catch it.
# expect-failure: \(draw 2 of 2\).*values differ beyond
import torch

_cache = {}


def relu_kernel_impl(x):
    key = (tuple(x.shape), x.dtype)
    if key not in _cache:
        _cache[key] = torch.clamp(x, min=0)
    return _cache[key].clone()
