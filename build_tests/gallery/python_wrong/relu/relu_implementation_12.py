# Wrong: returns a Python list, not a tensor.
# expect-failure: it returned a list where aten::relu returns Tensor
def relu_kernel_impl(x):
    return x.clamp(min=0).tolist()
