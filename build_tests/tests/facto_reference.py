#!/usr/bin/env python3
"""The FACTO suite holds valid inputs only: ATen's own kernel, the reference, runs every case of
the expanded suite on the CPU and must pass each one. A case ATen refuses (it throws) or has no
kernel for (it is skipped) means a specification allows an input the operator does not take.

Usage: facto_reference.py --executable build/backendbench_test_facto --traces build/generated/facto_traces/facto.txt
                          --work DIR
"""
import argparse
import json
import os
import subprocess
import sys

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--executable", required=True)
parser.add_argument("--traces", required=True)
parser.add_argument("--work", required=True)
args = parser.parse_args()

lines = open(args.traces).read().splitlines()
cases = sum(line.startswith("cnt: ") for line in lines)
operators = sum(line.startswith("Operator: ") for line in lines)
os.makedirs(args.work, exist_ok=True)
verdicts_path = os.path.join(args.work, "facto_reference.verdicts.jsonl")
if os.path.exists(verdicts_path):
    os.remove(verdicts_path)
done = subprocess.run([args.executable, "--gtest_filter=*.aten/*", "--backendbench_verdicts=" + verdicts_path],
                      capture_output=True, text=True, env=dict(os.environ, BACKENDBENCH_DEVICE="cpu"))
verdicts = [json.loads(line) for line in open(verdicts_path)] if os.path.exists(verdicts_path) else []
refused = [v for v in verdicts if v["status"] != "passed"]
for verdict in refused[:20]:
    source = verdict.get("source") or {}
    why = verdict.get("skip_reason") or next((c["message"] for c in verdict.get("checks", []) if not c["passed"]), "") \
        or "; ".join(map(str, verdict.get("errors") or []))
    print(f"{source.get('file', '?')}:{source.get('line', '?')}: error: the reference {verdict['status']} "
          f"{verdict['operator']} {verdict.get('arguments', '')}: {why[:300]}; expected an input the operator accepts")
print(f"{len(verdicts)} verdicts of the reference on {cases} cases of {operators} operators: "
      f"{len(verdicts) - len(refused)} passed, {len(refused)} not")
if done.returncode != 0 or len(verdicts) != cases or refused or cases == 0:
    print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
    sys.exit(1)
