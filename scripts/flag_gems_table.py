#!/usr/bin/env python3
"""FlagGems judged here, operator by operator, beside FlagGems' own labels (issue 61).

    scripts/flag_gems_table.py --labels FlagGems/conf/operators.yaml [--topn 3] [--out DIR] [--build build]
    scripts/flag_gems_table.py --labels FlagGems/conf/operators.yaml --results DIR     # table only

The first form runs `backendbench run --suite torchbench,opinfo,facto --backend flag_gems --device
cuda` (TorchBench timed, its N largest inputs per operator; OpInfo and FACTO correctness only) into
DIR, then writes the table from DIR's verdicts; the second writes the table from a results folder
of such a run. The labels are FlagGems' own `conf/operators.yaml` (its public repository,
flagos-ai/FlagGems; the wheel does not ship it): data from outside, never committed, so the path
is an argument. Written into DIR:

  flag_gems_operators.csv   per FlagGems operator the run reached: its KernelGen label and stage,
                            cases passed and failed, the first failing check and case, the speedup
                            over ATen (geomean of its timed cases that passed), a reproduce command
  flag_gems_operators.md    the same as a Markdown table, the summary line above it, and the 10
                            most-used TorchBench operators that fail, each with its command

The summary: of the KernelGen-labelled operators the run reached, how many pass every case here,
and the same for the other operators.
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import math
import pathlib
import subprocess
import sys
from typing import Optional

import yaml


def overload(name: str) -> str:
    """FlagGems' names (abs, add.Tensor) as the verdicts name overloads (abs.default)."""
    return name if "." in name else name + ".default"


def read_labels(path: pathlib.Path) -> dict[str, dict]:
    """Per overload: whether an entry naming it is labelled KernelGen, and its stages in order."""
    document = yaml.safe_load(path.read_text())
    if not isinstance(document, dict) or not isinstance(document.get("ops"), list):
        sys.exit(f"{path}:1:1: error: no 'ops' list; expected FlagGems' conf/operators.yaml")
    labels: dict[str, dict] = {}
    by_id: dict[str, dict] = {}
    for entry in document["ops"]:
        stages = []
        for stage in entry.get("stages") or []:
            stages += [f"{name} {version}" for name, version in (stage or {}).items()]
        kernel_gen = "KernelGen" in (entry.get("labels") or [])
        for name in entry.get("for") or []:
            if not isinstance(name, str) or name == "None":
                continue
            known = labels.setdefault(overload(name), {"kernel_gen": False, "stage": "", "ids": []})
            known["kernel_gen"] = known["kernel_gen"] or kernel_gen
            known["stage"] = known["stage"] or " → ".join(stages)
            known["ids"].append(entry.get("id", ""))
        by_id[overload(str(entry.get("id", "")))] = {"kernel_gen": kernel_gen, "stage": " → ".join(stages),
                                                     "ids": [entry.get("id", "")]}
    # An entry whose `for` misspells its operator (`flip`'s reads `filp`) still names it by its id.
    for name, known in by_id.items():
        if name.endswith(".default"):
            labels.setdefault(name, known)
    return labels


def first_failure(verdict: dict) -> tuple[str, str]:
    for check in verdict.get("checks") or []:
        if not check.get("passed", True):
            return check.get("check", ""), " ".join(str(check.get("message", "")).split())
    for error in verdict.get("errors") or []:
        text = " ".join((error if isinstance(error, str) else json.dumps(error)).split())
        # What the kernel raised or how its worker ended, without the case the columns already name.
        for lead in ("a Python exception: ", "the kernel worker failed: "):
            if lead in text:
                return "error", text.split(lead, 1)[1].split(" Traceback", 1)[0]
        return "error", text
    return verdict.get("status", ""), ""


def trace_uses(traces: pathlib.Path) -> dict[str, int]:
    """Per overload, its calls over every TorchBench trace (the sum of the `cnt:` lines)."""
    uses: dict[str, int] = collections.Counter()
    for path in traces.rglob("*.txt"):
        op = None
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("Operator: aten."):
                op = line[len("Operator: aten."):].strip()
            elif line.startswith("cnt: ") and op:
                uses[op] += int(line[5:].split(",", 1)[0])
    return uses


def verdict_lines(results: pathlib.Path) -> list[str]:
    """A results folder's verdicts.jsonl, or, for a build's results/ folder (a run that did not
    finish), every <suite>/<operator>/<backend>.verdicts.jsonl under it."""
    if (results / "verdicts.jsonl").exists():
        return (results / "verdicts.jsonl").read_text().splitlines()
    lines = []
    for path in sorted(results.rglob("*.verdicts.jsonl")):
        lines += path.read_text().splitlines()
    if not lines:
        sys.exit(f"{results}: error: no verdicts.jsonl and no *.verdicts.jsonl under it; "
                 "expected a results folder of backendbench run or a build's results/ folder")
    return lines


def tabulate(results: pathlib.Path, labels: dict[str, dict], topn: str = "",
             traces: Optional[pathlib.Path] = None) -> list[dict]:
    if (results / "run.json").exists():
        topn = str(json.loads((results / "run.json").read_text()).get("topn") or topn)
    cases: dict[str, dict[tuple, dict]] = collections.defaultdict(dict)
    speedups: dict[str, list[float]] = collections.defaultdict(list)
    for line in verdict_lines(results):
        if not line.strip():
            continue
        verdict = json.loads(line)
        if verdict.get("backend") != "flag_gems":
            continue
        op, key = verdict["operator"], (verdict["suite"], verdict["case"])
        if verdict["status"] == "skipped":
            continue
        known = cases[op].get(key)
        if known is None or (known["status"] == "passed" and verdict["status"] != "passed"):
            cases[op][key] = verdict
        timing = verdict.get("timing") or {}
        speedup = timing.get("speedup") if isinstance(timing, dict) else None
        if verdict["status"] == "passed" and isinstance(speedup, (int, float)) and speedup > 0 and math.isfinite(speedup):
            speedups[op].append(speedup)
    uses = trace_uses(traces) if traces else {}
    rows = []
    for op in sorted(cases):
        verdicts = list(cases[op].values())
        failed = [v for v in verdicts if v["status"] != "passed"]
        label = labels.get(op)
        row = {
            "operator": op,
            "kernel_gen": "" if label is None else ("yes" if label["kernel_gen"] else "no"),
            "stage": "" if label is None else label["stage"],
            "suites": ",".join(sorted({v["suite"] for v in verdicts})),
            "cases": len(verdicts),
            "passed": len(verdicts) - len(failed),
            "failed": len(failed),
            "torchbench_uses": uses.get(op, 0),
            "first_failing_check": "",
            "first_failing_case": "",
            "first_failure": "",
            "speedup": "",
            "reproduce": "",
        }
        if failed:
            first = sorted(failed, key=lambda v: (v["suite"] != "torchbench", v["suite"], v["case"]))[0]
            check, message = first_failure(first)
            row["first_failing_check"] = check
            row["first_failing_case"] = f"{first['suite']}/{first['case']} {first.get('arguments', '')}"[:300]
            row["first_failure"] = message[:300]
            suite = first["suite"]
            row["reproduce"] = (f"build/backendbench run --suite {suite} --backend flag_gems --ops {op} --device cuda"
                                + (f" --topn {topn}" if suite == "torchbench" and topn else "")
                                + ("" if suite == "torchbench" else " --no-timing"))
        if speedups.get(op):
            row["speedup"] = f"{math.exp(sum(map(math.log, speedups[op])) / len(speedups[op])):.3f}"
        rows.append(row)
    return rows


def summary(rows: list[dict]) -> list[str]:
    lines = []
    for name, pick in (("KernelGen-labelled", lambda r: r["kernel_gen"] == "yes"),
                       ("other labelled", lambda r: r["kernel_gen"] == "no"),
                       ("not in operators.yaml", lambda r: r["kernel_gen"] == "")):
        chosen = [r for r in rows if pick(r)]
        clean = sum(1 for r in chosen if r["failed"] == 0)
        lines.append(f"{name}: {clean} of {len(chosen)} operators reached pass every case here")
    return lines


def write(results: pathlib.Path, rows: list[dict]) -> None:
    fields = list(rows[0]) if rows else ["operator"]
    with (results / "flag_gems_operators.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    lines = ["# FlagGems judged here", ""] + [f"- {line}" for line in summary(rows)] + [""]
    lines += ["| operator | KernelGen | stage | passed | failed | first failing check | speedup |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| `{r['operator']}` | {r['kernel_gen'] or '-'} | {r['stage'] or '-'} | {r['passed']} | "
                     f"{r['failed']} | {r['first_failing_check'] or ''} | {r['speedup'] or ''} |")
    failing = sorted((r for r in rows if r["failed"] and r["torchbench_uses"]), key=lambda r: -r["torchbench_uses"])[:10]
    lines += ["", "## The 10 most-used TorchBench operators that fail", ""]
    for r in failing:
        lines += [f"- `{r['operator']}` ({r['torchbench_uses']} uses; {r['failed']} of {r['cases']} cases fail): "
                  f"{r['first_failing_check']}: {r['first_failure'][:200]}",
                  f"  case {r['first_failing_case'][:160]}", f"  `{r['reproduce']}`"]
    (results / "flag_gems_operators.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=pathlib.Path, help="FlagGems' conf/operators.yaml (without it the label columns stay empty)")
    parser.add_argument("--results", type=pathlib.Path, help="tabulate this results folder instead of running")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("flag_gems_results"))
    parser.add_argument("--build", default="build", help="the folder holding the backendbench command")
    parser.add_argument("--topn", default="3", help="TorchBench's N largest inputs per operator")
    parser.add_argument("--suite", default="torchbench,opinfo,facto", help="the suites to run")
    parser.add_argument("--traces", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parents[2] / "shared/traces/torchbench",
                        help="TorchBench's traces, to rank the failing operators by their calls there")
    parser.add_argument("run_args", nargs="*", help="more arguments for backendbench run (after --)")
    arguments = parser.parse_args(argv)
    labels = read_labels(arguments.labels) if arguments.labels else {}
    results = arguments.results
    if results is None:
        results = arguments.out
        command = [f"{arguments.build}/backendbench", "run", "--suite", arguments.suite, "--backend",
                   "flag_gems", "--device", "cuda", "--out", str(results)] + (["--topn", arguments.topn] if "torchbench" in arguments.suite else [])
        print("+", " ".join(command + arguments.run_args), flush=True)
        status = subprocess.call(command + arguments.run_args)
        if status not in (0, 1):  # 1: some case failed, which is what the table is for
            return status
    rows = tabulate(results, labels, arguments.topn, arguments.traces)
    write(results, rows)
    print("\n".join(summary(rows)))
    print(f"wrote {results / 'flag_gems_operators.csv'} and {results / 'flag_gems_operators.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
