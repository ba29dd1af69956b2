# Attack: skipping instead of failing. Wrong, and at import it raises an exception named like the
# one op libraries raise where they cannot run (KernelUnavailable), so that its cases are
# skipped, not failed. Only an op library the manifest names may be skipped: it fails.
# expect-failure: impl6 .*cannot run: .*this machine has no such hardware
class KernelUnavailable(Exception):
    pass


raise KernelUnavailable("this machine has no such hardware")


def relu_kernel_impl(*args, **kwargs):
    return args[0]
