# Wrong: never returns (holding the GIL); the per-case timeout must name the case.
# expect-failure: impl14 .* threw on relu\.default .*the kernel worker failed: it did not answer within the case timeout
def relu_kernel_impl(x):
    while True:
        pass
