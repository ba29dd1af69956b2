# Wrong: right output, but it clamps its read-only input in place on the way.
# expect-failure: argument 'self' is read-only in the schema but the kernel changed it
def relu_kernel_impl(x):
    x.clamp_(min=0)
    return x.clone()
