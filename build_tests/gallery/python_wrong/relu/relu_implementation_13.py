# Wrong: kills the process (os.abort); the crash fails this entry alone.
# expect-failure: CRASHED.*relu__default\.impl13.*SIGABRT
import os


def relu_kernel_impl(x):
    os.abort()
