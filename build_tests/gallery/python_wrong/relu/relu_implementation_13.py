# Wrong: kills the process (os.abort); the crash fails this entry alone.
# expect-failure: impl13 .* threw on relu\.default .*the kernel worker failed: .*died of SIGABRT
import os


def relu_kernel_impl(x):
    os.abort()
