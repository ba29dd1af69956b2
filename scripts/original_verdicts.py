#!/usr/bin/env python3
"""The original BackendBench's verdict on the cases of a results folder, side by side with ours.

    python3 scripts/original_verdicts.py RESULTS_DIR --backend flag_gems [--device cuda]

For each correctness case our run judged for that backend, it recomputes the verdict the way the
original's eval.py does (BackendBench §3.1 in the project's reference notes): inputs made from the
trace text with random values, `impl(*args, **kwargs)` against `op(*args, **kwargs)`, and
`allclose` with atol = rtol = 1e-2 (assert_close: shape, dtype and device must match; NaN equals
NaN); no fallback, aliasing, mutation or draw checks. For `flag_gems` the implementation is the
original's: FlagGems' function for the overload, with its two adapters (`_softmax` drops
`half_to_float`; `native_layer_norm` reshapes mean and rstd to [..., 1]). Prints one line per case
where the two verdicts differ, then the counts.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import pathlib
import sys

import torch

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "f64": torch.float64,
          "c64": torch.complex64, "c128": torch.complex128, "i8": torch.int8, "i16": torch.int16,
          "i32": torch.int32, "i64": torch.int64, "b8": torch.bool, "u8": torch.uint8}


def make_tensor_factory(device):
    def T(shape, dtype, stride=None, **unused):  # the original's _deserialize_tensor, in short
        if dtype.is_floating_point or dtype.is_complex:
            base = torch.randn
        elif dtype == torch.bool:
            base = lambda size, dtype, device: torch.randint(0, 2, size, device=device).bool()  # noqa: E731
        else:
            base = lambda size, dtype, device: torch.randint(0, 16, size, dtype=dtype, device=device)  # noqa: E731
        if stride is None:
            return base(tuple(shape), dtype=dtype, device=device)
        extent = 1 + sum((s - 1) * st for s, st in zip(shape, stride) if s > 0)
        return base((extent,), dtype=dtype, device=device).as_strided(tuple(shape), tuple(stride))
    return T


def arguments(text, device):
    names = {"T": make_tensor_factory(device), "inf": math.inf, "nan": math.nan, "torch": torch}
    names.update(DTYPES)
    return eval(text, names)  # noqa: S307 (trace text from our own suite files)


def original_allclose(expected, actual):
    stack = [(expected, actual)]
    while stack:
        a, b = stack.pop()
        if isinstance(a, torch.Tensor):
            torch.testing.assert_close(b, a, equal_nan=True, atol=1e-2, rtol=1e-2)
        elif isinstance(a, (list, tuple)):
            assert len(a) == len(b)
            stack.extend(zip(a, b))
        else:
            assert a == b


def flag_gems_implementation(overload):
    import flag_gems
    table = {}
    for row in flag_gems._FULL_CONFIG:
        name = row[0] if "." in row[0] else row[0] + ".default"
        table.setdefault(name, row[1])
    function = table.get(overload)
    if function is None:
        return None
    if overload == "_softmax.default":
        return lambda x, dim, half_to_float: function(x, dim, False)
    if overload == "native_layer_norm.default":
        def layer_norm(x, shape, weight, bias, eps):
            out, mean, rstd = function(x, shape, weight, bias, eps)
            keep = list(x.shape[: x.dim() - len(shape)]) + [1] * len(shape)
            return out, mean.view(keep), rstd.view(keep)
        return layer_norm
    return function


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results")
    parser.add_argument("--backend", default="flag_gems")
    parser.add_argument("--device", default="cuda")
    options = parser.parse_args()
    rows = [json.loads(line) for line in open(pathlib.Path(options.results) / "verdicts.jsonl")]
    rows = [r for r in rows if r["backend"] == options.backend and r["frontend"] == "tests" and r["status"] != "skipped"]
    counts = collections.Counter()
    for row in rows:
        base, _, overload = row["operator"].partition(".")
        op = getattr(getattr(torch.ops.aten, base), overload)
        implementation = flag_gems_implementation(row["operator"])
        torch.manual_seed(0)
        try:
            args, kwargs = arguments(row["arguments"], options.device)
            expected = op(*args, **kwargs)
            actual = implementation(*args, **kwargs)
            original_allclose(expected, actual)
            theirs, why = "passed", ""
        except Exception as error:  # the original records any exception as incorrect
            theirs, why = "failed", f"{type(error).__name__}: {' '.join(str(error).split())[:140]}"
        ours = row["status"]
        counts[(ours, theirs)] += 1
        if ours != theirs:
            reason = ((row.get("errors") or [""])[0].split(": ", 1)[-1])[:140]
            print(f"{row['operator']:28s} {row['case']:44s} ours {ours}: {reason} | original {theirs} {why}")
    print("cases (ours, original):", dict(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
