#!/usr/bin/env python3
"""The timing cheats (build_tests/gallery/timing_cheats) through ./bench: no forged time raises a speedup.

impl1 rewrites the worker's clock at load (80 % of its calls' time hidden), impl2 defers its work
to between samples, impl4 rewrites its worker's time answers on the protocol's descriptor (its
samples cut to a fifth), impl6 starts spinning threads at load that rest only during its own calls
(slowing its worker's reference, and the supervisor's if it were not stopped while the supervisor
times), impl7 one such thread only (its reference slowed 1.5-2x, within what the bound on the
worker's reference alone allows), impl8 keeps its outputs in a cache keyed on a fingerprint of
the input values (the checks' draws are the values timed next, so every timed call after a value
set's first is a lookup), impl9 sets its worker's mmap threshold back to 128 KiB at load (every
large output of the reference there faulted in afresh) and reuses its own output blocks, impl10
patches the clock as impl1 does and skips the calls of the supervisor's runs back to back but the
first and the one it predicts is the last (returning unfilled outputs), impl12 computes each
input's relu as the worker shapes the input (the supervisor's runs back to back too, before its
clock starts) and answers its calls with lookups, impl13 claims 3.4x by answering its samples from
a cache and computing the inputs of the supervisor's runs back to back from a thread the moment
their values appear in the memory they are laid over (it spins out the rest, to stay above the
run's floor): those values are written while its worker is stopped, so it must fail as
timing_disagrees or be counted by the supervisor's clock, or count no gain on a busy machine,
impl3 is their honest twin. Where impl12 fails,
it is because its run back to back beat the machine's peaks (run_floor_seconds) or its observer
slowed its worker's reference; otherwise it gains nothing (its samples time values it never saw).
impl10 must fail its 2048x2048 case as wrong when called back to back: every call's outputs are
judged by the supervisor (or, on a busy machine, count no gain). Each case of each cheat must either fail as
timing_disagrees (its worker's time disagrees with the supervisor's clock over its calls back to
back) or pass with a speedup no more than kAllowed times the honest twin's on the same case (the
forgeries claim 5x and more). A forgery measured while other processes took the cores passes flagged speedup_uncertain, counting
no gain (at most 1.0), whatever its twin read. The honest twin passes every case, and impl1's, impl4's and impl8's forged times on
the 2048x2048 case (a call of a millisecond, claimed at a fifth of it: over 100 us) fail it, or are
counted by the supervisor's clock (back_to_back_time; or,
while other processes take the cores, pass flagged speedup_uncertain counting no gain). Every
speedup counted beats the one both sides got back to back by the supervisor's clock
(back_to_back_speedup) by at most the tolerance, or is flagged speedup_uncertain and at most 1.
impl11 forges the GPU's timer (the CUDA guard's event record and elapsed time, in batches of
several calls only); on a CPU it is an honest twin. On CUDA only (gallery/cuda_timing_cheats):
impl14 watches the memory a run's inputs are laid over from a kernel left on the GPU; impl15
delays each launch of its worker's reference by 0.8x its own call's time (its paired speedup
1.8x, within the 2x bound on the worker's reference) and leaves a 300 ms spin on the GPU after
each run back to back, where the supervisor's reference runs next; impl16 delays it on the GPU
itself (a spin launched before each reference call, nothing waited for on the host, so its worker's
host-timed readings agree with its events): on the bounded cases both must be counted at the
supervisor's own reference figure or back to back, or fail.

With --device cuda (scripts/cuda_timing_cheats.sh, on the suite built from
fixtures/cuda_timing_cheats, the gallery's files built as .cu kernels: a .cpp kernel runs on the
CPU whatever the run's device, so every case must say it ran on CUDA) the cases whose calls last 100 us or more are the bounded ones: every
cheat there fails as timing_disagrees or wrong when timed, is counted by the supervisor's clock,
or passes within kCudaAllowed of its honest twin (the issue's 10 %). Shorter calls on CUDA are
bounded loosely: a cheat there fails, is counted, or gains at most kCudaShortCallAllowed.
"""
import argparse
import os
import re
import subprocess
import sys

from checks import check, failures

kAllowed = 3.0  # CPU noise between runs of the same kernel; the forgeries claim 5x and more
kBackToBackTolerance = 0.10  # kernel_workers.h, kCpuBackToBackTolerance: calls of 100 us or more (the 2048x2048 case)
kShortCallBackToBackTolerance = 0.5  # kCpuShortCallBackToBackTolerance: shorter calls (the 64x64 case)
kCudaBackToBackTolerance = 0.05  # kBackToBackTolerance: CUDA calls of 100 us or more
kCudaAllowed = 1.10  # a cheat's speedup over its honest twin's on a bounded CUDA case (run to run noise included)
kCudaBoundedCases = ("f32_8192x8192", "f32_16384x8192")  # calls of over 100 us on an H100 or H200
# Shorter CUDA calls are bounded loosely: a paired speedup stands up to twice the one both sides
# got back to back (kCudaShortCallBackToBackTolerance), which on calls of a few microseconds
# measures their launches; and the worker's reference figure stands up to twice the supervisor's
# own plus 2 us (kReferenceAgreement, kReferenceSlackUs), 2.5x on the 64x64 case's 4 us calls.
# impl16, which queues a spin before each launch of its worker's reference, read 2.23x there on
# an H100 (2026-12-06): on short calls a cheat gains at most the mechanism's 2.5x.
kCudaShortCallAllowed = 2.5

parser = argparse.ArgumentParser()
parser.add_argument("--bench", required=True)
parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
parser.add_argument("--suite", default="gallery_timing_cheats", help="the suite the gallery's relu cases are in")
parser.add_argument("--output", default=None, help="a file for ./bench's own output")
args = parser.parse_args()
cuda = args.device == "cuda"

run = subprocess.run([args.bench, f"--benchmark_filter=^{args.suite}/relu.default/", "--backendbench_bench_seconds=0.05"],
                     capture_output=True, text=True, timeout=540 if not cuda else 1500,
                     env=dict(os.environ, BACKENDBENCH_DEVICE=args.device))
output = run.stdout + run.stderr
if args.output:
    with open(args.output, "w") as saved:
        saved.write(output)


devices = set()  # the label of every result line: the device its case ran on
results = {}  # (case, impl) -> ("error", text), ("speedup", value) or ("uncertain", value): flagged speedup_uncertain
back_to_back = {}  # (case, impl) -> the speedup both sides got back to back, where bounded so
counted_back_to_back = set()  # (case, impl) whose speedup is the supervisor's back to back (back_to_back_time=1)
counted_own_reference = set()  # (case, impl) whose reference figure is the supervisor's own (supervisor_reference_time=1)
for line in output.splitlines():
    match = re.match(re.escape(args.suite) + r"/relu\.default/([^/]+)/(impl\d+)/\S+\s+(.*)", line)
    if not match:
        continue
    case, impl, rest = match.groups()
    if "ERROR OCCURRED" not in rest:
        devices.add(rest.split()[-1])
    if "ERROR OCCURRED" in rest:
        results[(case, impl)] = ("error", rest)
    else:
        def counter(name):
            found = re.search(r"\b" + name + r"=([0-9.eE+-]+)([kmun]?)", rest)
            scale = {"": 1, "k": 1e3, "m": 1e-3, "u": 1e-6, "n": 1e-9}[found.group(2)] if found else 1
            return float(found.group(1)) * scale if found else None
        value = counter("speedup")
        if counter("back_to_back_speedup") is not None:
            back_to_back[(case, impl)] = counter("back_to_back_speedup")
        results[(case, impl)] = ("uncertain" if "speedup_uncertain=1" in rest else
                                 "counted" if "back_to_back_time=1" in rest else "speedup", value)
        if "back_to_back_time=1" in rest:
            counted_back_to_back.add((case, impl))
        if "supervisor_reference_time=1" in rest:
            counted_own_reference.add((case, impl))

cases = sorted({case for case, _ in results})


def print_failures():
    """./bench's last output, then what failed, last: a log cut to its tail keeps the reasons."""
    print(output[-4000:])
    print("\n".join(["failed:"] + ["  " + what for what in failures]))


def check_cuda():
    check(all(any(case.startswith(bounded) for case in cases) for bounded in kCudaBoundedCases),
          f"./bench timed the bounded cases {kCudaBoundedCases} (found {cases}; exit status {run.returncode})")
    check(run.returncode == 0, f"./bench exits 0 (a failed case is not a crash): {run.returncode}")
    # A C++ kernel of a .cpp file runs on the CPU whatever the run's device (kernels.md).
    check(devices and all(device.startswith("cuda") for device in devices), f"every case ran on CUDA (labels {sorted(devices)})")
    for case in cases:
        honest = results.get((case, "impl3"))
        check(honest is not None and honest[0] != "error" and honest[1], f"{case}: the honest twin passes ({honest})")
        bounded = case.startswith(kCudaBoundedCases)
        for (other_case, impl), got in sorted(results.items()):
            if other_case != case or impl in ("aten", "impl3"):
                continue
            if not honest or honest[0] == "error" or not honest[1]:
                print(f"not bounded: {case} {impl}: {str(got)[:200]} (honest twin {honest})")
                continue
            if not bounded:
                check(got[0] == "error" or (case, impl) in counted_back_to_back or
                      (got[1] is not None and got[1] <= kCudaShortCallAllowed * honest[1]),
                      f"{case} {impl}: on short calls a cheat fails, is counted by the supervisor's clock, or gains at most "
                      f"{kCudaShortCallAllowed}x its honest twin's {honest[1]:.3g}x ({str(got)[:300]})")
                continue
            caught = got[0] == "error" and any(said in got[1] for said in ("its worker timed", "back to back", "wrong when",
                                                                        "the kernel left running there"))
            if got[0] == "error" and not caught:
                print(f"failed otherwise: {case} {impl}: {got[1][:300]}")  # no gain either; said, not judged
                continue
            check(caught or (case, impl) in counted_back_to_back or (got[1] is not None and got[1] <= kCudaAllowed * honest[1]),
                  f"{case} {impl}: fails as timing_disagrees or wrong when timed, is counted by the supervisor's clock, "
                  f"or gains at most {kCudaAllowed - 1:.0%} over its honest twin's {honest[1]:.3g}x ({str(got)[:300]})")
            if impl in ("impl15", "impl16"):
                # Its worker's reference slowed 1.8x: the supervisor's figures must have counted
                # (its own reference, or both sides back to back), or the case failed.
                check(caught or (case, impl) in counted_back_to_back or (case, impl) in counted_own_reference,
                      f"{case} {impl}: a reference slowed in its worker is counted at the supervisor's figure or fails "
                      f"({str(got)[:300]})")
            bound = back_to_back.get((case, impl))
            if got[0] != "error" and bound is not None:
                check(got[1] <= (1 + kCudaBackToBackTolerance) * bound * 1.0001,
                      f"{case} {impl}: its speedup {got[1]} is at most {1 + kCudaBackToBackTolerance} times the {bound} both sides got back to back")
    if failures:
        print_failures()
        sys.exit(1)
    sys.exit(0)


if cuda:
    check_cuda()
check(len(cases) == 2, f"./bench timed the gallery's 2 cases (found {cases}; exit status {run.returncode})")
check(run.returncode == 0, f"./bench exits 0 (a failed case is not a crash): {run.returncode}")
for case in cases:
    honest = results.get((case, "impl3"))
    check(honest is not None and honest[0] != "error" and honest[1], f"{case}: the honest twin passes ({honest})")
    if not honest or honest[0] == "error" or not honest[1]:
        continue
    for impl in ("impl1", "impl2", "impl4", "impl6", "impl7", "impl8", "impl9", "impl10", "impl12", "impl13"):
        got = results.get((case, impl))
        if impl == "impl13":
            # No pass within kAllowed of its twin: its claim is a steady 3.4x, which the run's
            # floor alone allowed when the run's inputs were made where the kernel could see them.
            # Its observer and thread can also slow its worker's reference past the supervisor's bound.
            # Where its forgery did not take (its cache missed under the full suite's load: 0.26x
            # once, on the 2-core machine), it passes slower than its twin: no gain either.
            caught = ("its worker timed the kernel at", "back to back", "its worker timed the reference at")
            # Flagged speedup_uncertain it counts at most 1.0 in the scores whatever it read (once
            # 1.05x under test.sh on a fresh clone), and the loop below bounds it by the speedup both
            # sides got back to back.
            check(got is not None and ((got[0] == "error" and any(said in got[1] for said in caught)) or
                                       (case, impl) in counted_back_to_back or
                                       (got[0] == "uncertain" and got[1] is not None) or
                                       (got[0] == "speedup" and got[1] is not None and got[1] <= honest[1])),
                  f"{case} {impl}: work done as the run's inputs appear fails as timing_disagrees, is counted by the supervisor's clock, counts no gain on a busy machine, or is slower than its twin ({str(got)[:300]})")
            continue
        if impl == "impl12" and got is not None and got[0] == "error":
            check(any(said in got[1] for said in ("the work was done before the clock started", "its worker timed the reference at")),
                  f"{case} {impl}: work done while the inputs were made fails as timing_disagrees ({str(got)[:300]})")
            continue
        if impl == "impl10" and case.startswith("f32_2048x2048"):
            # Or, where other processes took the cores (the suite's other tests) and its paired
            # timing disagreed before any call back to back, it passes flagged speedup_uncertain
            # and counts no gain, as every forgery does then (seen once under the full suite).
            check(got is not None and ((got[0] == "error" and "wrong when called back to back" in got[1]) or
                                       (got[0] == "uncertain" and got[1] is not None)),
                  f"{case} {impl}: skipping calls back to back fails as wrong_when_timed, or counts no gain on a busy machine ({str(got)[:300]})")
            continue
        if impl in ("impl1", "impl4", "impl8", "impl9") and case.startswith("f32_2048x2048"):
            # Or it is counted by the supervisor's clock (under 4x the speedup back to back, on a
            # CPU); or, where other processes took the cores meanwhile (the suite's other tests),
            # it passes flagged speedup_uncertain and counts no gain.
            # Flagged speedup_uncertain and counted back to back both (the machine busy while the
            # supervisor's clock took over) is counted by the supervisor's clock as well.
            caught = ("its worker timed the kernel at",) + (("its worker timed the reference at",) if impl == "impl9" else ())
            check(got is not None and ((got[0] == "error" and any(said in got[1] for said in caught)) or
                                       (case, impl) in counted_back_to_back or
                                       (got[0] == "uncertain" and got[1] is not None)),
                  f"{case} {impl}: a forged time on a call of over 100 us fails as timing_disagrees, is counted by the supervisor's clock, or counts no gain on a busy machine ({str(got)[:300]})")
            continue
        if got is None:
            check(False, f"{case} {impl}: no result")
        elif got[0] == "error":
            check(any(said in got[1] for said in ("its worker timed the kernel at", "back to back", "its worker timed the reference at")),
                  f"{case} {impl}: failed because its time disagrees with the supervisor's clock: {got[1][:300]}")
        elif got[0] == "uncertain" and got[1] is not None:
            # Measured while other processes took the cores (the suite's other tests): the scores
            # count it at most 1.0 (run_scores.cpp), whatever its honest twin read in its own busy
            # moment (once 0.32x; once 0.25x beside impl7's 1.01x, under test.sh on a fresh clone);
            # the loop below bounds its figure by the one both sides got back to back.
            print(f"said: {case} {impl}: flagged speedup_uncertain, counted at most 1.0 ({got[1]:.3g}x)")
        else:
            check(got[1] is not None and got[1] <= kAllowed * honest[1],
                  f"{case} {impl}: passed at {got[1]:.3g}x, the honest twin at {honest[1]:.3g}x (at most {kAllowed}x that)")
for (case, impl), got in sorted(results.items()):
    if impl == "aten" or got[0] == "error":
        continue
    bound = back_to_back.get((case, impl))
    tolerance = kBackToBackTolerance if case.startswith("f32_2048x2048") else kShortCallBackToBackTolerance
    within = bound is not None and got[1] is not None and got[1] <= (1 + tolerance) * bound * 1.0001
    if got[0] == "uncertain":
        # A busy machine: the scores count it at most 1; a timing that disagreed meanwhile is
        # itself cut to 1 (measure_in_worker), one that agreed is within the bound.
        check(within or (got[1] is not None and got[1] <= 1.0),
              f"{case} {impl}: flagged speedup_uncertain, its speedup {got[1]} is at most 1.0 or {1 + tolerance} times the {bound} both sides got back to back")
        continue
    check(within, f"{case} {impl}: its speedup {got[1]} is at most {1 + tolerance} times the {bound} both sides got back to back")
if failures:
    print_failures()
    sys.exit(1)
