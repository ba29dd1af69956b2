# Wrong: a fallback through the tensor method.
# expect-failure: falls back to ATen: it dispatches aten::relu
def relu_kernel_impl(x):
    return x.relu()
