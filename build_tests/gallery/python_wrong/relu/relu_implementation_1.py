# Wrong: identity "relu"; negative values must catch it.
# expect-failure: values differ beyond rtol=.*expected 0, got -
def relu_kernel_impl(x):
    return x.clone()
