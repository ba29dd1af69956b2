#!/usr/bin/env python3
"""Exports PyTorch's OpInfo sample inputs into backendbench's trace language.

For every OpInfo of the installed torch (torch.testing._internal.common_methods_invocations.op_db)
and each requested dtype, each sample input is run once under a TorchDispatchMode that records
the ATen calls it makes. As in BackendBench's opinfo suite, a sample is kept only when it
dispatches exactly one ATen operator; it is then written as a case of that overload (for
example aten.add.Tensor), with the arguments the ATen call received, tensor values included
(`T([2], f32, values=[...])`, see traces/README.md). A sample is left out, and counted by
reason, when it dispatches zero or several operators, is not deterministic (two calls on
copies of the same inputs differ), or holds values the trace language cannot write (complex
numbers, generators, tensors over --max-elements).

With --ops (the build's BACKENDBENCH_OPS: exact overloads such as add.Tensor, or base names such
as add, which select every overload of that base), only samples of the selected ATen overloads
are written, and only OpInfos that can give them are run: those whose name (or ATen name, or an
alias) is a selected base, and those whose first sample, run on the first dtype, dispatches an
operator of a selected base. The first sample alone decides for the others; OpInfos are
otherwise not run at all, which is what makes a selection cheap.

The output starts with a comment naming the torch version, dtypes, selection and counts.

Usage: export_opinfo.py --output opinfo.txt [--dtypes bf16,f16,f32] [--ops add.Tensor,relu] [--max-elements N]
"""
import argparse
import collections
import contextlib
import math
import os
import sys
import warnings

DTYPES = {
    "bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64",
}
ABBREVIATIONS = {
    "torch.bfloat16": "bf16", "torch.float16": "f16", "torch.float32": "f32", "torch.float64": "f64",
    "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32", "torch.int64": "i64",
    "torch.bool": "b8", "torch.uint8": "u8",
}


class Unwritable(Exception):
    """A value the trace language cannot express."""


def float_text(value):
    text = repr(float(value))
    return text  # Python's repr: the printer's canonical form (nan, inf, -inf, -0.0, 1e-05)


def tensor_text(tensor, max_elements):
    import torch
    dtype = ABBREVIATIONS.get(str(tensor.dtype))
    if dtype is None:
        raise Unwritable(f"{tensor.dtype} tensor")
    if tensor.layout != torch.strided:
        raise Unwritable(f"{tensor.layout} tensor")
    shape = list(tensor.shape)
    strides = list(tensor.stride())
    contiguous = tensor.is_contiguous()
    if any(size == 0 for size in shape):
        extent = 0
    else:
        extent = 1 + sum((size - 1) * stride for size, stride in zip(shape, strides))
    if extent > max_elements:
        raise Unwritable(f"a tensor over --max-elements ({max_elements}) elements")
    storage = tensor.detach().as_strided((extent,), (1,), tensor.storage_offset()).cpu()
    if dtype == "b8":
        values = ["True" if v else "False" for v in storage.tolist()]
    elif dtype in ("bf16", "f16", "f32", "f64"):
        values = [float_text(v) for v in storage.double().tolist()]
    else:
        values = [str(int(v)) for v in storage.tolist()]
    text = f"T([{', '.join(map(str, shape))}], {dtype}"
    if not contiguous:
        text += ", stride=(" + ", ".join(map(str, strides)) + (",)" if len(strides) == 1 else ")")
    return text + ", values=[" + ", ".join(values) + "])"


def value_text(value, max_elements):
    import torch
    if isinstance(value, torch.Tensor):
        return tensor_text(value, max_elements)
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_text(value)
    if value is None:
        return "None"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, torch.dtype):
        if str(value) not in ABBREVIATIONS:
            raise Unwritable(f"dtype {value}")
        return ABBREVIATIONS[str(value)]
    if isinstance(value, torch.device):
        # Written 'cuda', as in the TorchBench traces: the harness reads it as "the run's device".
        return "\"torch.device('cuda')\""
    if isinstance(value, (torch.memory_format, torch.layout)):
        return str(value)
    if isinstance(value, (list, tuple, torch.Size)):
        items = [value_text(item, max_elements) for item in value]
        if isinstance(value, tuple) and not isinstance(value, torch.Size):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    raise Unwritable(type(value).__name__)


def arguments_text(args, kwargs, max_elements):
    positional = value_text(tuple(args), max_elements)
    keywords = ", ".join(f"'{name}': {value_text(value, max_elements)}" for name, value in kwargs.items())
    return f"({positional}, {{{keywords}}})"


def clone_tree(value):
    import torch
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(clone_tree(v) for v in value)
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    return value


def same_results(a, b):
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.layout != torch.strided:
            a, b = a.to_dense(), b.to_dense()
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_complex() or not a.dtype.is_floating_point:
            return bool(torch.equal(a, b))
        return bool(torch.allclose(a, b, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_results(x, y) for x, y in zip(a, b))
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


@contextlib.contextmanager
def memory_filled_deterministically():
    """Operators that return uninitialised memory (empty_strided, new_empty, empty_like) fill it
    with NaN or the integer maximum while deterministic algorithms are on
    (torch.utils.deterministic.fill_uninitialized_memory): without it, whether two of their calls
    agreed depended on what the allocator handed back, and a build's OpInfo suite held their
    samples or not by chance (8 or 6 cases of empty_strided and empty_like in three exports)."""
    import torch
    was = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)  # warn, never raise: only the fill is wanted
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=warn_only)


def trace_name_of(func):
    """aten.add.Tensor, aten.relu.default: the trace spelling of a dispatched ATen overload."""
    name = func.name()  # aten::add.Tensor
    trace_name = name.replace("::", ".")
    if "." not in name.split("::", 1)[1]:
        trace_name += ".default"
    return trace_name


class OperatorSelection:
    """--ops, with the generator's filter rule (model::matches_filter): an exact overload selects
    that overload; a base name selects every overload whose base is exactly that name."""

    def __init__(self, text):
        self.filters = [f[len("aten."):] if f.startswith("aten.") else f
                        for f in text.replace(";", ",").split(",") if f.strip()]
        self.bases = {f.split(".")[0] for f in self.filters}
        self.first_sample_decided = {}  # OpInfo name -> whether its first sample dispatches a selected base

    def selects(self, trace_name):
        if not self.filters:
            return True
        display = trace_name.split(".", 1)[1]  # add.Tensor
        return any(display == f if "." in f else display.split(".")[0] == f for f in self.filters)

    def may_give(self, op, dtype, recorder_type):
        if not self.filters:
            return True
        names = {op.name, op.name.split(".")[-1], getattr(op, "aten_name", None) or ""}
        names |= {alias.name for alias in getattr(op, "aliases", ())}
        if names & self.bases:
            return True
        if op.name not in self.first_sample_decided:
            import torch
            decided = False
            torch.manual_seed(0)
            try:
                sample = next(iter(op.sample_inputs("cpu", dtype)))
                recorder = recorder_type()
                with recorder:
                    op.op(sample.input, *sample.args, **sample.kwargs)
                decided = any(trace_name_of(func).split(".")[1] in self.bases for func, _, _ in recorder.calls)
            except Exception:
                decided = False
            self.first_sample_decided[op.name] = decided
        return self.first_sample_decided[op.name]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", required=True)
    parser.add_argument("--dtypes", default="bf16,f16,f32")
    parser.add_argument("--ops", default="",
                        help="ATen overloads (add.Tensor, aten.add.Tensor) or base names (add) to export, "
                             "comma- or ;-separated (default: all)")
    parser.add_argument("--max-elements", type=int, default=4096)
    options = parser.parse_args()

    warnings.filterwarnings("ignore")
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.calls.append((func, clone_tree(args), clone_tree(kwargs)))
            return func(*args, **kwargs)

    selection = OperatorSelection(options.ops)
    cases = collections.OrderedDict()  # trace name -> ordered set of argument texts
    skipped = collections.Counter()
    for dtype_name in options.dtypes.split(","):
        dtype = getattr(torch, DTYPES[dtype_name])
        for op in op_db:
            # BackendBench's selection: plain and nn.functional names, not nonzero_static.
            if ("." in op.name and "nn.functional" not in op.name) or op.name == "nonzero_static":
                continue
            if dtype not in op.supported_dtypes("cpu"):
                continue
            if not selection.may_give(op, dtype, Recorder):
                skipped["OpInfo not selected (--ops)"] += 1
                continue
            torch.manual_seed(0)  # OpInfo draws sample values at random: the same file every run
            try:
                samples = list(op.sample_inputs("cpu", dtype))
            except Exception:
                skipped["sample generation failed"] += 1
                continue
            for sample in samples:
                recorder = Recorder()
                try:
                    with recorder:
                        op.op(sample.input, *sample.args, **sample.kwargs)
                except Exception:
                    skipped["the sample raised"] += 1
                    continue
                if len(recorder.calls) != 1:
                    skipped["dispatched zero or several ATen operators"] += 1
                    continue
                func, args, kwargs = recorder.calls[0]
                if func.namespace != "aten":
                    skipped["dispatched a non-ATen operator"] += 1
                    continue
                try:
                    text = arguments_text(args, kwargs, options.max_elements)
                    with memory_filled_deterministically():
                        first = func(*clone_tree(args), **clone_tree(kwargs))
                        second = func(*clone_tree(args), **clone_tree(kwargs))
                except Unwritable as reason:
                    skipped[f"holds {reason}"] += 1
                    continue
                except Exception:
                    skipped["the traced ATen call raised on its own"] += 1
                    continue
                try:
                    deterministic = same_results(first, second)
                except Exception:
                    skipped["its results cannot be compared"] += 1
                    continue
                if not deterministic:
                    skipped["not deterministic"] += 1
                    continue
                trace_name = trace_name_of(func)
                if not selection.selects(trace_name):
                    skipped["dispatched an operator not selected (--ops)"] += 1
                    continue
                cases.setdefault(trace_name, collections.OrderedDict())[text] = None

    total = sum(len(texts) for texts in cases.values())
    lines = [
        f"# OpInfo sample inputs exported from torch {torch.__version__} by generator/opinfo/export_opinfo.py",
        f"# dtypes: {options.dtypes}; operators: {options.ops or 'all'}; {len(cases)} ATen operators, {total} distinct cases; samples left out:",
    ]
    for reason, count in sorted(skipped.items(), key=lambda item: -item[1]):
        lines.append(f"#   {count} {reason}")
    for trace_name in sorted(cases):
        lines.append(f"Operator: {trace_name}")
        lines.extend(f"cnt: 1, {text}" for text in cases[trace_name])
    os.makedirs(os.path.dirname(os.path.abspath(options.output)), exist_ok=True)
    temporary = options.output + ".tmp"
    with open(temporary, "w") as out:
        out.write("\n".join(lines) + "\n")
    os.replace(temporary, options.output)  # never a half-written file
    print(f"export_opinfo: torch {torch.__version__}: {len(cases)} operators, {total} cases -> {options.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
