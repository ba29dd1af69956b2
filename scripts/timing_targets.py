#!/usr/bin/env python3
"""Measures ./bench against its timing targets, on the cases of BackendBench's aten-vs-aten run.

The reference run (../shared/measurements/backendbench_aten_h200.json: BackendBench timing the
aten operator against itself with triton.testing.do_bench on one H200) covers 914 TorchBench
cases of relu, _softmax, native_layer_norm, sigmoid, gelu, div, tanh and mean. This script
builds the torchbench suite for those operators, then prints four numbers:

  self-consistency  ./bench's calibration backend aten_self (the aten operator as reference and
                    as kernel, two independent interleaved measurements): the share of cases
                    whose speedup lies in [0.97, 1.03]; target >= 99 %.
  sensitivity       backend aten_twice (a kernel doing the same work twice), cases whose
                    reference takes over 20 us: the share measuring 0.5x within 5 %, and the
                    median speedup; target 0.5x within 5 %.
  agreement         median over cases of |our aten time / do_bench time - 1|; target <= 3 %;
                    in the default layout and in the do_bench layout.
                    do_bench is run live when triton is importable (same inputs' shapes), else
                    the reference file's do_bench_ref_ms is used.
  cost              wall time of correctness (ctest, aten backend) plus timing (./bench,
                    aten_self: reference and kernel) of the cases; target <= 50 s (BackendBench:
                    206 s).

Usage: scripts/timing_targets.py [--build-dir build-timing] [--traces DIR] [--measurements FILE]
       [--cmake-arg=-DX=Y ...] [--jobs N] [--skip-build] [--do-bench-cache FILE] [--label TEXT]
       [--out-dir DIR] [--only-agreement] [--null-test OPS] [--composed]

--composed: instead, what the supervisor's bound back to back does to honest kernels in their
workers (the calibration backends run in ./bench's own process, so none of the above is bounded):
build_tests/gallery/composed, one kernel of several launches for each operator, built as CUDA
kernels, timed on the same cases; prints how many cases were bounded, counted by the bound and
failed by it (target 0), and the spread of their speedup as counted over the one back to back.

Agreement is printed twice: for the default sampling layout, and for BACKENDBENCH_LAYOUT=do_bench,
which copies do_bench's (timing.h). Other layouts come from the environment (BACKENDBENCH_FLUSH=
write|read, BACKENDBENCH_FLUSH_MIB, BACKENDBENCH_BATCH_PAIRS), so that one build can be measured
under several (--skip-build); --do-bench-cache keeps the live do_bench times between runs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

OPS = ["relu", "_softmax", "native_layer_norm", "sigmoid", "gelu", "div", "tanh", "mean"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(command, **kwargs):
    print("+", " ".join(command), flush=True)
    return subprocess.run(command, check=True, **kwargs)


def display(op_trace_name):  # aten.relu.default -> relu.default
    return op_trace_name.split(".", 1)[1]


def jobs_file(build_dir, backends, operators, path):
    """A JSON Lines file of jobs (README, "Jobs"): every case of the wanted operators' overloads in
    the torchbench suite (its suite.json) on each backend, timed."""
    with open(os.path.join(build_dir, "generated", "torchbench", "suite.json")) as handle:
        suite = json.load(handle)
    with open(path, "w") as out:
        for op in suite["operators"]:
            if op["operator"].split(".")[0] not in operators:
                continue
            for backend in backends:
                out.write(json.dumps({"schema": "backendbench-job", "version": 1, "suite": "torchbench",
                                      "operator": op["operator"], "backend": backend, "mode": "time"}) + "\n")
    return path


def bench_summary(build_dir, backends, path, environment=None, operators=OPS):
    jobs = jobs_file(build_dir, backends, operators, path + ".jobs.jsonl")
    started = time.time()
    calibration = ["--backendbench_calibration"] if any(b != "aten" for b in backends) else []
    run([os.path.join(build_dir, "bench"), f"--backendbench_job={jobs}", f"--backendbench_summary={path}",
         "--benchmark_format=json", f"--benchmark_out={path}.benchmark.json"] + calibration,
        stdout=subprocess.DEVNULL, env=dict(os.environ, **(environment or {})))
    elapsed = time.time() - started
    with open(path) as handle:
        return [flat_case(verdict) for verdict in json.load(handle)["cases"]], elapsed


def flat_case(verdict):
    """A verdict of the summary (README, "Verdicts") as the flat record this script compares."""
    timing = verdict.get("timing") or {}
    return {"op": verdict["operator"], "args": verdict["arguments"], "backend": verdict["backend"],
            "case": verdict["case"], "correct": verdict["status"] == "passed", "flags": verdict.get("flags", []),
            "back_to_back_speedup": timing.get("back_to_back_speedup", -1),
            **{field: timing.get(field, 0.0) for field in ("reference_us", "kernel_us", "kernel_mean_us", "speedup")}}


def live_do_bench(cases, cache_path):
    """do_bench times (ms) of the reference cases, or None without triton or CUDA."""
    if cache_path and os.path.exists(cache_path):
        with open(cache_path) as handle:
            return {(record["op"], record["args"]): record["ms"] for record in json.load(handle)}
    try:
        import torch
        import triton.testing
    except Exception:
        return None
    if not torch.cuda.is_available():
        return None
    names = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
             "i64": torch.int64, "i32": torch.int32, "b8": torch.bool, "u8": torch.uint8}

    def T(shape, dtype, stride=None, device=None):
        size = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if stride and all(shape) else None
        if stride and size:
            base = torch.randn(size, device="cuda").to(dtype) if dtype.is_floating_point else torch.randint(0, 9, (size,), device="cuda").to(dtype)
            return base.as_strided(shape, stride)
        if dtype.is_floating_point:
            return torch.randn(shape, device="cuda").to(dtype)
        return torch.randint(0, 9, shape, device="cuda").to(dtype)

    times = {}
    for case in cases:
        op = case["op"]
        _, name, overload = op.split(".")
        function = getattr(getattr(torch.ops.aten, name), overload)
        args, kwargs = eval(case["args"], {"T": T, **names, "torch": torch})
        times[(op, case["args"])] = triton.testing.do_bench(lambda: function(*args, **kwargs))
    if cache_path:
        with open(cache_path, "w") as handle:
            json.dump([{"op": op, "args": args, "ms": ms} for (op, args), ms in times.items()], handle)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build-timing"))
    parser.add_argument("--traces", default=os.path.join(ROOT, "..", "shared", "traces", "torchbench"))
    parser.add_argument("--measurements",
                        default=os.path.join(ROOT, "..", "shared", "measurements", "backendbench_aten_h200.json"))
    parser.add_argument("--cmake-arg", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--skip-build", action="store_true", help="use the build directory as it is")
    parser.add_argument("--do-bench-cache", help="JSON file of live do_bench times: read if present, else written")
    parser.add_argument("--label", default="run", help="names this run in the one-line result printed last")
    parser.add_argument("--null-test", metavar="OPS",
                        help="instead: self-consistency of aten_self on these comma-separated operators")
    parser.add_argument("--only-agreement", action="store_true", help="time the aten backend only, for agreement")
    parser.add_argument("--composed", action="store_true",
                        help="instead: the bound back to back on build_tests/gallery/composed's honest kernels")
    parser.add_argument("--out-dir", default="/tmp", help="where the bench summaries (<label>_*.json) go")
    options = parser.parse_args()

    with open(options.measurements) as handle:
        reference = json.load(handle)
    wanted = {(case["op"], case["args"]): case for case in reference["cases"]}
    if options.null_test:
        return null_test(options)
    if options.composed:
        return composed(options, wanted)
    if not options.skip_build:
        build(options, options.build_dir, OPS)
    return measure(options, reference, wanted)


def build(options, build_dir, ops, extra=()):
    run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
         "-DBACKENDBENCH_SUITES=torchbench", "-DBACKENDBENCH_BUILD_TESTS=OFF", f"-DBACKENDBENCH_OPS={','.join(ops)}",
         f"-DBACKENDBENCH_TORCHBENCH_TRACES={options.traces}"] + list(extra) + options.cmake_arg, stdout=subprocess.DEVNULL)
    run(["cmake", "--build", build_dir], stdout=subprocess.DEVNULL)


def composed(options, wanted):
    """The bound back to back on honest kernels of several launches (build_tests/gallery/composed),
    each built as a CUDA kernel whose whole text is its host part."""
    build_dir = options.build_dir + "-composed"
    kernels = os.path.join(build_dir + "-kernels")
    if not options.skip_build:
        gallery = os.path.join(ROOT, "build_tests", "gallery", "composed")
        for folder in sorted(os.listdir(gallery)):
            if not os.path.isdir(os.path.join(gallery, folder)):
                continue
            os.makedirs(os.path.join(kernels, folder), exist_ok=True)
            for name in os.listdir(os.path.join(gallery, folder)):
                with open(os.path.join(gallery, folder, name)) as source:
                    text = source.read()
                with open(os.path.join(kernels, folder, name.replace(".cpp", ".cu")), "w") as out:
                    out.write("#ifndef BACKENDBENCH_DEVICE_PART\n" + text + "#endif\n")
        build(options, build_dir, OPS, [f"-DBACKENDBENCH_KERNELS_DIR={kernels}"])
    cases, seconds = bench_summary(build_dir, ["impl1"], os.path.join(options.out_dir, options.label + "_composed.json"))
    ours = [case for case in cases if case["backend"] == "impl1" and ("aten." + case["op"], case["args"]) in wanted]
    timed = [case for case in ours if case["correct"] or "timing_disagrees" in case["flags"]]
    bounded = [case for case in timed if case["back_to_back_speedup"] > 0]
    counted = [case for case in timed if "back_to_back_time" in case["flags"]]
    failed = [case for case in timed if "timing_disagrees" in case["flags"]]
    capped = [case for case in timed if "supervisor_reference_time" in case["flags"]]
    print(f"composed kernels: {len(ours)} cases, {len(timed)} right and timed, {seconds:.1f} s")
    print(f"reference figure counted at the supervisor's own (supervisor_reference_time): {len(capped)}")
    print(f"bound back to back: {len(bounded)} bounded, {len(counted)} counted by it (back_to_back_time), "
          f"{len(failed)} failed (timing_disagrees; target 0)")
    ratios = sorted(case["speedup"] / case["back_to_back_speedup"] for case in bounded if case["back_to_back_speedup"] > 0)
    if ratios:
        percentiles = statistics.quantiles(ratios, n=100) if len(ratios) > 1 else ratios * 99
        print(f"speedup as counted / back-to-back speedup over the bounded cases: median {statistics.median(ratios):.3f}, "
              f"1st/99th percentile {percentiles[0]:.3f}/{percentiles[-1]:.3f}, max {ratios[-1]:.3f}")
    for case in failed[:10]:
        print(f"  failed: {case['op']} {case['args'][:80]} speedup {case['speedup']}")
    print(f"RESULT {options.label} | composed {len(timed)} timed | bounded {len(bounded)} | counted {len(counted)} | "
          f"failed {len(failed)} | reference capped {len(capped)}")
    return 0


def null_test(options):
    """Self-consistency on other operators: their 10 largest and 10 smallest TorchBench inputs."""
    ops = options.null_test.split(",")
    build_dir = options.build_dir + "-null"
    if not options.skip_build:
        build(options, build_dir, ops, ["-DBACKENDBENCH_TOPN=10", "-DBACKENDBENCH_BOTTOMN=10"])
    cases, seconds = bench_summary(build_dir, ["aten_self"], os.path.join(options.out_dir, options.label + "_null.json"),
                                   operators=ops)
    speedups = [case["speedup"] for case in cases if case["backend"] == "aten_self" and case["correct"]]
    within = sum(0.97 <= s <= 1.03 for s in speedups)
    print(f"RESULT {options.label} | null test on {','.join(ops)}: {within}/{len(speedups)} = "
          f"{100 * within / max(1, len(speedups)):.1f} % of aten_self speedups in [0.97, 1.03], "
          f"min {min(speedups):.3f} max {max(speedups):.3f}, {seconds:.1f} s")
    return 0


def measure(options, reference, wanted):
    prefix = os.path.join(options.out_dir, options.label)
    line = [options.label]

    def matched(cases, backend):
        found = {}
        for case in cases:
            key = ("aten." + case["op"], case["args"])
            if case["backend"] == backend and key in wanted:
                found[key] = case
        return found

    if options.only_agreement:
        aten_cases, _ = bench_summary(options.build_dir, ["aten"], prefix + "_aten.json")
        line += agreement(options, wanted, matched(aten_cases, "aten"))
        print("RESULT " + " | ".join(line))
        return 0

    # Cost: correctness (aten backend) and timing (aten_self) of the cases, wall clock.
    started = time.time()
    correctness = subprocess.run(["ctest", "--test-dir", options.build_dir, "-L", "aten", "-j", str(options.jobs)],
                                 capture_output=True, text=True)
    correctness_seconds = time.time() - started
    print(correctness.stdout.strip().splitlines()[-1] if correctness.stdout.strip() else correctness.stderr)
    self_cases, self_seconds = bench_summary(options.build_dir, ["aten_self"], prefix + "_self.json")
    other_cases, _ = bench_summary(options.build_dir, ["aten", "aten_twice"], prefix + "_other.json")

    self_matched = matched(self_cases, "aten_self")
    speedups = [case["speedup"] for case in self_matched.values() if case["correct"]]
    within = sum(0.97 <= s <= 1.03 for s in speedups)
    percentiles = statistics.quantiles(speedups, n=100)
    print(f"\ncases: {len(wanted)} in the reference run; {len(self_matched)} matched here")
    print(f"self-consistency: {within}/{len(speedups)} = {100 * within / max(1, len(speedups)):.1f} % of aten_self "
          f"speedups in [0.97, 1.03] (target >= 99 %); "
          f"1st/99th percentile {percentiles[0]:.3f}/{percentiles[-1]:.3f}")
    line.append(f"self {100 * within / max(1, len(speedups)):.1f}%")

    # What the supervisor's bound back to back did to honest kernels: none should fail by it, and
    # few be counted by it (their paired speedup beyond the tolerance).
    for backend, cases in (("aten_self", self_matched.values()), ("aten_twice", matched(other_cases, "aten_twice").values())):
        cases = list(cases)
        bounded = [case for case in cases if case["back_to_back_speedup"] > 0]
        flagged = {flag: sum(flag in case["flags"] for case in cases) for flag in ("back_to_back_time", "timing_disagrees")}
        print(f"bound back to back ({backend}): {len(bounded)} of {len(cases)} cases bounded; "
              f"{flagged['back_to_back_time']} counted by it (back_to_back_time), {flagged['timing_disagrees']} failed "
              f"(timing_disagrees; target 0)")
        line.append(f"{backend} b2b {len(bounded)}/{len(cases)} counted {flagged['back_to_back_time']} "
                    f"failed {flagged['timing_disagrees']}")

    twice = [case for case in matched(other_cases, "aten_twice").values() if case["correct"] and case["reference_us"] > 20]
    ratios = [case["speedup"] for case in twice]
    close = sum(abs(r / 0.5 - 1) <= 0.05 for r in ratios)
    if ratios:
        print(f"sensitivity: {close}/{len(ratios)} = {100 * close / len(ratios):.1f} % of aten_twice cases above 20 us "
              f"measure 0.5x within 5 %; median {statistics.median(ratios):.4f}x")
        line.append(f"sensitivity {100 * close / len(ratios):.1f}% median {statistics.median(ratios):.4f}")

    line += agreement(options, wanted, matched(other_cases, "aten"))
    # The same, in the layout that copies do_bench's (BACKENDBENCH_LAYOUT=do_bench).
    do_bench_layout, _ = bench_summary(options.build_dir, ["aten"], prefix + "_do_bench_layout.json",
                                       {"BACKENDBENCH_LAYOUT": "do_bench"})
    print("in the do_bench layout:")
    line += ["do_bench layout " + text for text in agreement(options, wanted, matched(do_bench_layout, "aten"))]
    print(f"cost: correctness {correctness_seconds:.1f} s + timing {self_seconds:.1f} s = "
          f"{correctness_seconds + self_seconds:.1f} s for {len(self_matched)} cases (target <= 50 s; BackendBench "
          f"{reference['total_wall_s']} s)")
    line.append(f"cost {correctness_seconds + self_seconds:.1f}s")
    print("RESULT " + " | ".join(line))
    return 0


def agreement(options, wanted, ours):
    """Prints agreement with do_bench for our mean and our median; returns short forms."""
    live = live_do_bench([wanted[key] for key in ours], options.do_bench_cache)
    source = "live triton.testing.do_bench" if live else "the reference file's do_bench_ref_ms"
    short = []
    # do_bench reports the mean of its samples: compared with our mean, and with our median.
    for statistic, field in (("mean", "kernel_mean_us"), ("median", "kernel_us")):
        deviations, ratios = [], []
        for key, case in ours.items():
            theirs_ms = live[key] if live else wanted[key]["do_bench_ref_ms"]
            if theirs_ms > 0:
                ratios.append(case[field] / (theirs_ms * 1e3))
                deviations.append(abs(ratios[-1] - 1))
        print(f"agreement ({statistic}): median |our aten time / do_bench time - 1| = "
              f"{100 * statistics.median(deviations):.2f} % over {len(deviations)} cases, median ratio "
              f"{statistics.median(ratios):.3f} ({source}; target <= 3 %)")
        short.append(f"agreement({statistic}) {100 * statistics.median(deviations):.2f}% "
                     f"ratio {statistics.median(ratios):.3f}")
    return short


if __name__ == "__main__":
    sys.exit(main())
