# Wrong: never returns (holding the GIL); the per-case timeout must name the case.
# expect-failure: TIMEOUT.*relu__default\.impl14.*ran longer than
def relu_kernel_impl(x):
    while True:
        pass
