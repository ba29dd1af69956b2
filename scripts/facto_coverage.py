#!/usr/bin/env python3
"""The FACTO suite against FACTO's own SpecDB, per operator: our cases, dtypes and edge kinds
(from the expanded trace file), whether FACTO specifies the operator, and what its specification
allows that ours does not (generator/facto/facto_specdb.txt, read from FACTO's db.py). Prints a
Markdown table and a summary; generator/facto/coverage.md is its output.

Usage: scripts/facto_coverage.py build/generated/facto_traces/facto.txt [generator/facto/facto_specdb.txt]
"""
import collections
import os
import re
import sys

EDGE_KINDS = [  # (name, what in a case's "# facto:" comment marks it)
    ("empty", r"size-0 dim"), ("0-dim", r"^\w+: 0-dim$"), ("size-1", r"^\w+: size-1 dim"),
    ("strided", r"non-contiguous"), ("expanded", r"expanded \(zero stride\)"), ("specials", r"special values"),
    ("odd length", r"odd length"),
    ("broadcast", r": broadcast: "), ("promotion", r"\(promotion\)"),
    ("negative dim", r"^\w+ (-\d|\[-?\d+, -)"), ("ranks", r": rank \d"), ("values", r" = "),
]


def our_cases(path):
    cases = collections.defaultdict(lambda: {"cases": 0, "dtypes": set(), "edges": set()})
    operator, probe = None, ""
    for line in open(path):
        if line.startswith("Operator: "):
            operator = line.split()[1].removeprefix("aten.")
        elif line.startswith("# facto: "):
            probe = line[len("# facto: "):].strip()
        elif line.startswith("cnt: ") and operator:
            entry = cases[operator]
            entry["cases"] += 1
            first = re.search(r"T\(\[[^\]]*\], (\w+)", line)
            if first:
                entry["dtypes"].add(first.group(1))
            for name, pattern in EDGE_KINDS:
                if re.search(pattern, probe):
                    entry["edges"].add(name)
    return cases


def facto_operators(path):
    operators = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        name, _, note = line.rstrip("\n").partition("\t")
        base, _, overload = name.partition(".")
        if base.endswith("_copy") and base not in ("lift_fresh_copy", "_to_copy"):
            base = base.removesuffix("_copy")
        operators[f"{base}.{overload}"] = (name, note)
    return operators


def main():
    traces = sys.argv[1]
    specdb = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "generator", "facto",
                                                                  "facto_specdb.txt")
    ours, theirs = our_cases(traces), facto_operators(specdb)
    dtype_order = ["f32", "f16", "bf16", "f64", "i64", "i32", "i16", "i8", "u8", "b8"]
    print("| operator | our cases | our dtypes (first tensor) | our edge kinds | in FACTO's SpecDB | FACTO allows, ours not |")
    print("|---|---|---|---|---|---|")
    for operator in sorted(set(ours) | set(theirs)):
        entry = ours.get(operator)
        name, note = theirs.get(operator, ("", ""))
        if entry:
            dtypes = " ".join(d for d in dtype_order if d in entry["dtypes"])
            edges = ", ".join(kind for kind, _ in EDGE_KINDS if kind in entry["edges"])
            row = [f"`{operator}`", str(entry["cases"]), dtypes, edges]
        else:
            row = [f"`{operator}`", "—", "", ""]
        row += [f"`{name}`" if name else "no", note]
        print("| " + " | ".join(row) + " |")
    both = set(ours) & set(theirs)
    print()
    print(f"Ours: {len(ours)} operators, {sum(e['cases'] for e in ours.values())} cases. FACTO's SpecDB: "
          f"{len(theirs)} operators. Both: {len(both)}; only ours: {len(set(ours) - set(theirs))}; "
          f"only FACTO's: {len(set(theirs) - set(ours))} ({', '.join(sorted(set(theirs) - set(ours)))}).")


if __name__ == "__main__":
    main()
