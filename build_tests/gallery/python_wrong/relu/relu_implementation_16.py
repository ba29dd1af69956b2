# Wrong: hands the work back to ATen on a thread of its own (torch.relu there), which an observer
# of the calling thread alone does not see.
# expect-failure: falls back to ATen: it dispatches aten::relu, the operator it replaces, on another thread
import threading

import torch


def relu_kernel_impl(x):
    result = []
    worker = threading.Thread(target=lambda: result.append(torch.relu(x)))
    worker.start()
    worker.join()
    return result[0]
