#!/usr/bin/env python3
"""Every CTest entry of the build has exactly one test tier label: unit, system or e2e
(cmake/BackendBenchSuite.cmake, backendbench_set_test_tier; the README says which to run when).

Lists the entries with `ctest --show-only=json-v1` and prints each one with no tier or with
more than one, then exits 1 when there is one.
"""
import argparse
import json
import subprocess
import sys

TIERS = {"unit", "system", "e2e"}

parser = argparse.ArgumentParser()
parser.add_argument("--ctest", required=True)
parser.add_argument("--build", required=True)
args = parser.parse_args()

listing = subprocess.run([args.ctest, "--show-only=json-v1"], cwd=args.build, capture_output=True, text=True, check=True)
tests = json.loads(listing.stdout)["tests"]
wrong = []
counts = {tier: 0 for tier in sorted(TIERS)}
for test in tests:
    labels = set()
    for prop in test.get("properties", []):
        if prop["name"] == "LABELS":
            labels.update(prop["value"])
    tiers = sorted(labels & TIERS)
    for tier in tiers:
        counts[tier] += 1
    if len(tiers) != 1:
        wrong.append(f"{test['name']}: tiers {tiers or 'none'}; expected exactly one of unit, system, e2e")
print(f"{len(tests)} entries: " + ", ".join(f"{tier} {count}" for tier, count in counts.items()))
for line in wrong:
    print(line)
sys.exit(1 if wrong or not tests else 0)
