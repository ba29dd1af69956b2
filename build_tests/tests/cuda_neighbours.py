#!/usr/bin/env python3
"""A correct CUDA kernel beside hostile neighbours gets what it gets alone (scripts/cuda_neighbours.sh).

build_tests/gallery/cuda_neighbours: impl1 is an honest relu; impl2 takes all but 256 MiB of the
GPU's free memory at load, impl3 keeps a kernel spinning on the GPU from load until it is first called, impl4 takes
whatever memory is free from a thread, every 20 ms, impl5 leaves a 3 s spin on the GPU (in a
context of its own) when its turn ends, impl6 forks a child at load that holds the GPU's device
files without CUDA state. Through ./bench on CUDA, impl1 is timed once
alone (a job of its own: only its worker starts) and once after its neighbours' jobs (every
worker started and listed first, the neighbours' loads done; each neighbour's job is the 64x64
case; every request is answered within kCaseTimeout, or its worker is ended). It must pass every
case both times, with speedups within kAllowed of each other; the supervisor must say it ended a
neighbour for want of room on the GPU (kernel_workers.h, kGpuRoomShare), impl5's worker for the
work it left on the GPU, and impl6's because it could not be held, and impl3's own checks
must show its spin ran (they wait for it), so the attacks took place and were met. No child of
impl6's outlives the run.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from checks import check, failures

kAllowed = 1.10  # impl1's speedup beside its neighbours against alone, either way (run to run noise included)
kCaseTimeout = 30  # seconds (BACKENDBENCH_CASE_TIMEOUT), both runs alike

parser = argparse.ArgumentParser()
parser.add_argument("--bench", required=True)
parser.add_argument("--suite", default="torchbench", help="the suite the gallery's relu cases are in")
parser.add_argument("--logs", default=None, help="a folder for each ./bench run's output, written as it runs")
args = parser.parse_args()


def job(backend, **fixed):
    return {"schema": "backendbench-job", "version": 1, "suite": args.suite, "operator": "relu.default", "backend": backend,
            "mode": "time", **fixed}


def bench(jobs, name):
    """./bench over `jobs`: its exit status, its output, and {(case, impl): ("error", text) or ("speedup", value)}."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as listed:
        listed.write("".join(json.dumps(j) + "\n" for j in jobs))
    log_path = os.path.join(args.logs, name + ".log") if args.logs else tempfile.mktemp(suffix=".log")
    try:
        with open(log_path, "w") as log:
            status = subprocess.run([args.bench, f"--backendbench_job={listed.name}", "--backendbench_bench_seconds=0.05"],
                                    stdout=log, stderr=subprocess.STDOUT, text=True, timeout=560,
                                    env=dict(os.environ, BACKENDBENCH_DEVICE="cuda",
                                             BACKENDBENCH_CASE_TIMEOUT=str(kCaseTimeout))).returncode
        with open(log_path) as log:
            output = log.read()
    finally:
        os.unlink(listed.name)
        if not args.logs and os.path.exists(log_path):
            os.unlink(log_path)
    results = {}
    for line in output.splitlines():
        match = re.match(re.escape(args.suite) + r"/relu\.default/([^/]+)/(impl\d+)/\S+\s+(.*)", line)
        if not match:
            continue
        case, impl, rest = match.groups()
        if "ERROR OCCURRED" in rest:
            results[(case, impl)] = ("error", rest)
            continue
        found = re.search(r"\bspeedup=([0-9.eE+-]+)([kmun]?)", rest)
        scale = {"": 1, "k": 1e3, "m": 1e-3, "u": 1e-6, "n": 1e-9}[found.group(2)] if found else 1
        results[(case, impl)] = ("speedup", float(found.group(1)) * scale if found else None, rest.split()[-1])
    return status, output, results


alone_status, alone_output, alone = bench([job("impl1")], "alone")
cases = sorted({case for case, impl in alone if impl == "impl1"})
check(len(cases) == 4, f"impl1 alone: ./bench timed the fixture's 4 relu cases (found {cases}; exit {alone_status})")
short = [case for case in cases if case.startswith("f32_64x64")]
neighbour = dict(cases=short[:1])
beside_status, beside_output, beside = bench([job("impl2", **neighbour), job("impl3", **neighbour), job("impl4", **neighbour),
                                              job("impl6", **neighbour), job("impl5", **neighbour), job("impl1")], "beside")
check(alone_status == 0 and beside_status == 0, f"./bench exits 0 both times (a failed case is not a crash): {alone_status}, {beside_status}")
for case in cases:
    first, second = alone.get((case, "impl1")), beside.get((case, "impl1"))
    passed = [got is not None and got[0] == "speedup" and got[1] and got[2].startswith("cuda") for got in (first, second)]
    check(passed[0], f"{case}: impl1 alone passes on CUDA ({str(first)[:300]})")
    check(passed[1], f"{case}: impl1 beside its neighbours passes on CUDA ({str(second)[:300]})")
    if all(passed):
        ratio = second[1] / first[1]
        check(1 / kAllowed <= ratio <= kAllowed,
              f"{case}: impl1's speedup beside its neighbours {second[1]:.3g}x against {first[1]:.3g}x alone ({ratio:.3f}x)")
for impl in ("impl2", "impl3", "impl4", "impl5", "impl6"):
    for case in short[:1]:
        got = beside.get((case, impl))
        print(f"neighbour {impl} {case}: {str(got)[:200]}")  # their own verdicts: said, not judged
ended = [line for line in beside_output.splitlines() if "was ended:" in line]
for line in ended:
    print("said: " + line[:300])
check(any("of the GPU's memory was free" in line for line in ended), "a neighbour that took the GPU's memory was ended for room")
# Ended when its processes could not be locked for the spin the driver waited on, or, locked, when
# the GPU was found busy after its turn.
check(any("relu_implementation_5" in line and ("kept the GPU busy after its turn" in line or "still on the GPU" in line)
          for line in ended),
      "impl5's worker, whose spin outlived its turn, was ended before the next kernel went on")
check(any("relu_implementation_6" in line and "could not be held" in line for line in ended),
      "impl6's worker, whose child holds the GPU's device files without CUDA state, was ended when it could not be held")
left = subprocess.run(["pgrep", "-x", "bb_nvfd_child"], capture_output=True, text=True).stdout.split()
check(not left, f"no child of impl6's outlives the run (left: {left})")
# impl3's spin is real: its own checks waited for it (seconds), while beside impl1 it never ran,
# its processes locked (a locked process's CUDA calls wait) from the moment another kernel was asked.
spinner = next((got for (case, impl), got in beside.items() if impl == "impl3"), None)
checks_ms = None
for line in beside_output.splitlines():
    found = re.search(r"/impl3/\S+\s.*\bchecks_ms=([0-9.]+)([k]?)", line)
    if found:
        checks_ms = float(found.group(1)) * (1e3 if found.group(2) == "k" else 1)
check(checks_ms is not None and checks_ms >= 4000,
      f"impl3 spun on the GPU in its own turn: its checks waited {checks_ms} ms for its spin ({str(spinner)[:200]})")
if failures:
    print(beside_output[-6000:])
    sys.exit(1)
