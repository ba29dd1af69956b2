"""What the Python bridge (build_tests/python/) asks of Python: a .py kernel file loaded as the
original's directory backend loads it, and an op library's callable for one operator. Errors are
raised as KernelLoadError (the kernel is broken: its CTest entry fails, with file and line) or
KernelUnavailable (it cannot run here: its entry is skipped, with the reason).
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys
import traceback
from typing import Callable

from backendbench import op_libraries


class KernelLoadError(Exception):
    pass


class KernelUnavailable(Exception):
    pass


def _line_in(path: str, error: BaseException) -> int:
    """The last line of `path` the error's traceback passes through (1 when it passes none)."""
    line = 1
    for frame in traceback.extract_tb(error.__traceback__):
        if pathlib.Path(frame.filename) == pathlib.Path(path):
            line = frame.lineno or 1
    return line


def start_triton() -> None:
    """Imports Triton where it is installed (0.7 s on the H200 machine) and, where CUDA is
    available, compiles and launches one tiny kernel: a process's first Triton kernel call took
    1.4 s on the H200 machine, each later compile 40-60 ms (a probe, 2026-11-28), most likely
    because the first also builds and loads Triton's CUDA driver helpers. Run by a spare
    worker before any kernel is loaded; a failure is left for the kernels' own import to report."""
    if importlib.util.find_spec("triton") is None:
        return
    import torch
    import triton
    import triton.language as tl

    if not torch.cuda.is_available():
        return

    @triton.jit
    def _warm_up(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)

    x = torch.zeros(16, device="cuda")
    out = torch.empty_like(x)
    _warm_up[(1,)](x, out, x.numel(), BLOCK=16)
    torch.cuda.synchronize()


def load_kernel_file(path: str, function_name: str) -> Callable:
    """The file's `function_name`, the module imported under its own name (op_<file stem>)."""
    module_name = "op_" + pathlib.Path(path).stem
    expected = f"a module that defines {function_name}(*args, **kwargs)"
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses, pickling and Triton look modules up here
        spec.loader.exec_module(module)
    except SyntaxError as error:
        sys.modules.pop(module_name, None)
        raise KernelLoadError(f"{error.filename or path}:{error.lineno or 0}:{error.offset or 0}: error: "
                              f"{type(error).__name__}: {error.msg}; expected {expected}") from None
    except Exception as error:
        sys.modules.pop(module_name, None)
        details = "".join(traceback.format_exception(type(error), error, error.__traceback__)).rstrip()
        raise KernelLoadError(f"{path}:{_line_in(path, error)}:1: error: importing it raised "
                              f"{type(error).__name__}: {error}; expected {expected}\n{details}") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise KernelLoadError(f"{path}:1:1: error: it defines no function {function_name}; expected def "
                              f"{function_name}(*args, **kwargs), which the original's directory backend calls")
    return function


def op_library_function(library: str, op: str) -> Callable:
    try:
        return op_libraries.implementation(library, op)
    except op_libraries.Unavailable as why:
        raise KernelUnavailable(str(why)) from None
