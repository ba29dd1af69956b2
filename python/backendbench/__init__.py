"""backendbench: the kernels of generated_kernels/ as a PyTorch backend.

    import backendbench
    backendbench.enable()                  # every kernel, on its device's dispatch key
    model(x)                               # runs unchanged; overridden operators run the kernels
    backendbench.disable()

    with backendbench.enabled(include=["relu", "add"]):
        model(x)

The library (libbackendbench_backend.so, beside this file) holds every kernel; enabling
registers the chosen ones with PyTorch's dispatcher, disabling removes them. Which kernel serves
an operator: with results (the CTest entries' and ./bench's verdicts, `results=` or
$BACKENDBENCH_RESULTS) the fastest passing one, else the lowest-numbered passing one; a kernel
without results is first checked on the library's smoke and edge cases (`check=True`); a
failing kernel is left out, with a warning naming its first failing case, unless `force=True`.
Inside a kernel, every overridden operator runs ATen's own kernel (no recursion). The same
library loads with torch.ops.load_library(backendbench.library_path()).
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import pathlib
import warnings
from typing import Any, Callable, Iterable, Iterator, Optional, Union

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["enable", "disable", "enabled", "registered", "kernels", "calls", "last_check", "library_path", "use_library",
           "coverage", "Coverage"]

_LIBRARY = pathlib.Path(__file__).with_name("libbackendbench_backend.so")
_loaded = False

Filters = Optional[Union[str, Iterable[str]]]


def library_path() -> str:
    """The backend library's path, for torch.ops.load_library or a C++ program."""
    return str(_LIBRARY)


def use_library(path: str) -> None:
    """Use another backend library than the packaged one (a C++ build's libbackendbench_<name>.so,
    another kernel set); before the first enable(): a process loads one backend library."""
    global _LIBRARY
    if _loaded and pathlib.Path(path).resolve() != _LIBRARY.resolve():
        raise RuntimeError(f"{path}: a backend library is already loaded ({_LIBRARY}); use_library() must come "
                           "before the first enable()")
    _LIBRARY = pathlib.Path(path)


def _ops():
    global _loaded
    if not _loaded:
        if not _LIBRARY.exists():
            raise RuntimeError(f"{_LIBRARY}: the backend library is missing; reinstall the package "
                               "(pip install --no-build-isolation <repository>)")
        torch.ops.load_library(str(_LIBRARY))
        _loaded = True
    return torch.ops.backendbench


def _filters(value: Filters) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def enable(include: Filters = None, exclude: Filters = None, results: Optional[str] = None,
           force: bool = False, check: bool = True) -> list[str]:
    """Registers the chosen kernels; returns what was registered, one line per kernel.

    include/exclude: operator names (``relu``: every overload) or overloads (``add.Tensor``).
    results: a results folder (``build/results``); default $BACKENDBENCH_RESULTS.
    A second enable() replaces the first. Each line of what registering chose not to do (a
    failing kernel left out, a kernel registered unverified) is a UserWarning.
    """
    for line in _ops().enable(_filters(include), _filters(exclude), results or "", force, check):
        warnings.warn(line, stacklevel=2)
    return registered()


def last_check() -> tuple[int, float]:
    """What the enable() in force checked before registering: (kernels, seconds); (0, 0.0) when
    nothing is enabled, or every kernel had results."""
    checked, seconds = _ops().last_check()
    return int(checked), float(seconds)


def disable() -> bool:
    """Removes every registration; False when nothing was enabled."""
    return bool(_ops().disable())


@contextlib.contextmanager
def enabled(include: Filters = None, exclude: Filters = None, results: Optional[str] = None,
            force: bool = False, check: bool = True) -> Iterator[list[str]]:
    """enable() for a `with` block; disables on the way out, exceptions included."""
    lines = enable(include, exclude, results, force, check)
    try:
        yield lines
    finally:
        disable()


def registered() -> list[str]:
    """What is registered now: 'relu.default impl1 on CPU (…/relu_implementation_1.cpp)'."""
    return list(_ops().registered())


def kernels() -> list[str]:
    """Every kernel the library holds: 'relu.default impl1 CPU (…/relu_implementation_1.cpp)'."""
    return list(_ops().kernels())


def calls() -> dict[str, tuple[int, int]]:
    """Per registered operator: (calls that ran the kernel, ATen calls made inside kernels)."""
    counts = {}
    for line in _ops().calls():
        op, kernel_calls, aten_calls = line.split(" ")
        counts[op] = (int(kernel_calls), int(aten_calls))
    return counts


@dataclasses.dataclass
class Coverage:
    """What one run dispatched: per ATen overload (relu.default), its calls, and how many calls ran
    one of our kernels. `share` is kernel calls over all calls. Kernel calls also count the calls
    that ATen's own kernels make inside another operator (a CPU backward calling at::mul), which
    the dispatched count does not see: an operator can show more kernel calls than calls."""

    calls: dict[str, int]
    kernel_calls: dict[str, int]

    @property
    def share(self) -> float:
        total = sum(self.calls.values())
        return sum(self.kernel_calls.values()) / total if total else 0.0

    def table(self) -> str:
        """One line per operator, most called first: calls, kernel calls, and ours or ATen's."""
        width = max([len("operator")] + [len(op) for op in self.calls])
        lines = [f"{'operator':{width}s} {'calls':>8s} {'kernel':>8s}"]
        for op, count in sorted(self.calls.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"{op:{width}s} {count:8d} {self.kernel_calls.get(op, 0):8d}")
        lines.append(f"{sum(self.kernel_calls.values())} of {sum(self.calls.values())} calls ran a kernel "
                     f"({100 * self.share:.1f} %)")
        return "\n".join(lines)


def _overload_name(func) -> str:
    """An ATen overload as the library names it: relu.default, add.Tensor."""
    return f"{func._schema.name.split('::', 1)[-1]}.{func._overloadname or 'default'}"


class _RecordOperators(TorchDispatchMode):
    """Counts every ATen overload dispatched below autograd (forward and backward)."""

    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[_overload_name(func)] += 1
        return func(*args, **(kwargs or {}))


def coverage(run: Callable[[], Any]) -> Coverage:
    """Runs `run` (a model's forward and backward, say) under the backend as enabled now and
    returns which ATen operators it dispatched and how many calls ran our kernels."""
    before = calls()
    with _RecordOperators() as recorder:
        run()
    after = calls()
    kernel_calls = {op: after[op][0] - before.get(op, (0, 0))[0] for op in after}
    return Coverage(dict(recorder.counts), {op: n for op, n in kernel_calls.items() if n})
