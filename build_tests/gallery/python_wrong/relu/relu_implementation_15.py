# Wrong: returns a torch.Tensor subclass. Its values are right, but a subclass (a
# __torch_dispatch__ wrapper, say) can defer its work until its values are read, after the call
# is timed, or be read differently than a plain tensor: a kernel must return plain tensors.
# expect-failure: impl15 .* threw on relu\.default .*it returned a Deferred, a subclass of torch\.Tensor; expected a plain torch\.Tensor
import torch


class Deferred(torch.Tensor):
    pass


def relu_kernel_impl(x):
    return x.clamp(min=0).as_subclass(Deferred)
