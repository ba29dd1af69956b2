#!/usr/bin/env python3
"""The suite on one GPU and on every GPU of this machine, through the README's `backendbench run`:
prints the figures of the multi-GPU scaling measurement (wall times, scaling efficiency, the GPUs
the entries used, proof that no timing entry shared its GPU, and the timing null test).

  1. the aten backend's correctness on the whole TorchBench suite (--no-timing), on the first GPU
     (CUDA_VISIBLE_DEVICES=<first>) and then on all; efficiency = time on 1 / (N x time on N);
  2. the kernel folder's correctness and timing (--topn inputs), on 1 GPU and on all; the null
     test compares each timed case's kernel time, reference time and speedup between the two.

Each run's entries are profiled from its JUnit file (how many, their total seconds and their cases'
seconds, the longest).
Each run is watched from /proc (scripts/entry_sampler.py): the most entries at once on a GPU and
any ./bench beside another entry on its GPU. Phase times are the run's own (run.json's
phase_seconds, unrounded; the progress lines for an older build), without the build. Prints a
JSON summary at the end and writes it to <out>/scaling.json.

Usage: scripts/gpu_scaling.py --backendbench build/backendbench --traces DIR [--build build-scaling]
       [--out scaling_results] [--topn 5] [--kernels directory | --cuda-kernels-only] [--kernel-ops relu,add]
       [--gpu-slots 4] [--rounds 1] [--skip-aten | --skip-kernels] [--run-args '--one-job-per-entry']
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from entry_sampler import EntrySampler  # noqa: E402


def gpu_count():
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return len([line for line in listing.splitlines() if line.startswith("GPU ")])


def phase_seconds(log, phase):
    """The last progress line of a phase: 'correctness  17546/17546 cases  0 failed  2:01 elapsed'."""
    found = re.findall(phase + r"\s+\d+/\d+ cases.*?(\d+):(\d\d) elapsed", log.replace("\r", "\n"))
    return int(found[-1][0]) * 60 + int(found[-1][1]) if found else None


def entry_times(junit_path):
    """Each CTest entry's seconds and its cases' seconds (GoogleTest's 'N tests ... ran. (X ms
    total)'), from the run's JUnit file: the difference is the entry's start-up and tear-down."""
    if not os.path.exists(junit_path):
        return {}
    times = {}
    for case in ElementTree.parse(junit_path).iter("testcase"):
        output = case.findtext("system-out") or ""
        ran = re.findall(r"tests? from \d+ test suites? ran\. \((\d+) ms total\)", output)
        served = re.findall(r"\(served by \S+ in (\d+) ms; waited (\d+) ms, handled in (\d+) ms\)", output)
        times[case.get("name")] = (float(case.get("time", 0)), int(ran[-1]) / 1000 if ran else 0.0,
                                   int(served[-1][0]) / 1000 if served else None,
                                   int(served[-1][1]) / 1000 if served else None,
                                   int(served[-1][2]) / 1000 if served else None)
    return times


def supervisor_starts(log_path):
    """Each served-entry supervisor's CUDA start in seconds, from the run's servers.log."""
    if not os.path.exists(log_path):
        return []
    return [int(ms) / 1000 for ms in re.findall(r"CUDA started in (\d+) ms", open(log_path, errors="replace").read())]


def cuda_kernels_only(folder, into):
    """A copy of a kernel folder with only its CUDA kernels (and shared headers): the example C++
    kernels run on the CPU, where TorchBench's largest inputs take minutes a case."""
    shutil.rmtree(into, ignore_errors=True)
    for root, _, files in os.walk(folder):
        for file in files:
            if file.endswith((".cu", ".cuh", ".h")):
                target = os.path.join(into, os.path.relpath(root, folder))
                os.makedirs(target, exist_ok=True)
                shutil.copy(os.path.join(root, file), target)
    return into


def run(options, name, visible, arguments):
    out = os.path.join(options.out, name)
    command = [options.backendbench, "run", *arguments, "--device", "cuda", "--salt", "0x5eed", "--build", options.build,
               "--out", out, "--gpu-slots", str(options.gpu_slots), *options.run_args.split()]
    environment = dict(os.environ)
    environment.pop("CUDA_VISIBLE_DEVICES", None)
    if visible is not None:
        environment["CUDA_VISIBLE_DEVICES"] = visible
    started = time.time()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
    with EntrySampler(process.pid, period=0.05) as sampler:
        log, _ = process.communicate()
    open(out + ".log", "w").write(log)
    verdicts = [json.loads(line) for line in open(os.path.join(out, "verdicts.jsonl"))] if os.path.exists(
        os.path.join(out, "verdicts.jsonl")) else []
    # The phases' unrounded seconds from run.json (its progress lines count whole seconds: 14
    # against 15 s is 7 % of a four-GPU run's efficiency); the progress lines where it has none.
    phases = {}
    if os.path.exists(os.path.join(out, "run.json")):
        phases = json.load(open(os.path.join(out, "run.json"))).get("phase_seconds", {})
    timed = lambda phase: round(phases[phase], 2) if phase in phases else phase_seconds(log, phase)
    result = {"exit": process.returncode, "wall_s": round(time.time() - started, 1),
              "correctness_s": timed("correctness"), "timing_s": timed("timing"),
              "cases_per_gpu": {}, "failed": sum(v["status"] == "failed" for v in verdicts),
              "most_entries_per_gpu": sampler.most_per_gpu, "timing_beside_another": sampler.timing_shared[:5]}
    times = entry_times(os.path.join(out, "junit.xml"))
    if times:
        result["entries"] = len(times)
        result["entry_seconds_total"] = round(sum(t[0] for t in times.values()), 1)
        result["case_seconds_total"] = round(sum(t[1] for t in times.values()), 1)
        # Served entries: the request's seconds as the client saw them (connect to answer); an
        # entry's time beyond its request is the client's own, the request's beyond its cases
        # the supervisor's (waiting for CUDA, making the job's cases, writing verdicts).
        served = [t for t in times.values() if t[2] is not None]
        result["served_entries"] = len(served)
        if served:
            # seconds: the requests as their clients saw them; of which waiting for the supervisor
            # (its CUDA start, its last request's end); handled beyond the cases (the job's set-up,
            # the verdicts file); and the rest, the socket and the answer's way back.
            result["request_seconds_total"] = round(sum(t[2] for t in served), 1)
            result["request_waited_seconds_total"] = round(sum(t[3] for t in served), 1)
            result["request_handled_beyond_cases_seconds_total"] = round(sum(t[4] - t[1] for t in served), 1)
            result["request_waited_worst"] = round(max(t[3] for t in served), 2)
        result["longest_entries"] = sorted(((round(t[0], 1), n) for n, t in times.items()), reverse=True)[:5]
    starts = supervisor_starts(os.path.join(options.build, "backendbench_logs", "servers.log"))
    if starts:
        result["supervisors_cuda_start_s"] = {"count": len(starts), "median": round(statistics.median(starts), 2),
                                              "max": round(max(starts), 2)}
    if os.path.exists(os.path.join(options.build, "backendbench_logs", "servers.log")):
        shutil.copy(os.path.join(options.build, "backendbench_logs", "servers.log"), out + ".servers.log")
    result["omp_num_threads"] = {kind: sorted(map(str, values)) for kind, values in sampler.threads.items()}
    for verdict in verdicts:
        gpu = verdict.get("gpu", "none")
        result["cases_per_gpu"][gpu] = result["cases_per_gpu"].get(gpu, 0) + 1
    print(f"{name}: {json.dumps(result)}", flush=True)
    return result, verdicts


def null_test(one, many):
    def timed(verdicts):
        return {(v["operator"], v["backend"], v["case"]): v["timing"] for v in verdicts
                if v.get("frontend") == "bench" and v.get("timing") and v["timing"].get("kernel_us")}

    a, b = timed(one), timed(many)
    shared = [key for key in a if key in b]
    summary = {"timed_cases": len(shared)}
    for field in ["kernel_us", "reference_us", "speedup"]:
        # A non-finite figure is written "Infinity", "-Infinity" or "NaN" (JSON has none): float() reads both forms.
        ratios = [float(b[key][field]) / float(a[key][field]) for key in shared if float(a[key][field])]
        if ratios:
            summary[field] = {"median_ratio": round(statistics.median(ratios), 4),
                              "within_3_percent": round(sum(abs(r - 1) <= 0.03 for r in ratios) / len(ratios), 4),
                              "worst_ratio": round(max(ratios, key=lambda r: abs(r - 1)), 4)}
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backendbench", required=True)
    parser.add_argument("--traces", required=True)
    parser.add_argument("--build", default="build-scaling")
    parser.add_argument("--out", default="scaling_results")
    parser.add_argument("--topn", type=int, default=5)
    parser.add_argument("--kernels", default="directory")
    parser.add_argument("--cuda-kernels-only", action="store_true",
                        help="time only the CUDA kernels of generated_kernels/ (copied into <out>/cuda_kernels)")
    parser.add_argument("--kernel-ops", default="", help="operators of the kernel runs (C++ kernels run on the CPU: "
                        "on TorchBench's largest inputs they take minutes a case)")
    parser.add_argument("--gpu-slots", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="aten runs on 1 GPU and on all, this many times in turns")
    parser.add_argument("--skip-aten", action="store_true")
    parser.add_argument("--skip-kernels", action="store_true")
    parser.add_argument("--run-args", default="", help="more arguments for every run, e.g. --one-job-per-entry "
                        "(each operator and backend an entry of its own, as before small jobs were packed)")
    options = parser.parse_args()
    options.build, options.out = os.path.abspath(options.build), os.path.abspath(options.out)
    os.makedirs(options.out, exist_ok=True)
    gpus = gpu_count()
    summary = {"gpus": gpus, "gpu_slots": options.gpu_slots,
               "gpu_model": subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                           capture_output=True, text=True).stdout.splitlines()[:1],
               "date": time.strftime("%Y-%m-%d")}
    suite = ["--suite", "torchbench", "--traces", options.traces]
    if not options.skip_aten:
        aten = [*suite, "--backend", "aten", "--no-timing"]
        # Rounds in turns, 1 GPU then all: the first 1-GPU run of a new build is planned by case
        # counts, every later run by the times of the run before it (logs/case_costs.json).
        rounds = []
        for round_number in range(1, options.rounds + 1):
            tag = "" if round_number == 1 else f".{round_number}"
            one, _ = run(options, f"aten_1gpu{tag}", "0", aten)
            many, verdicts = run(options, f"aten_{gpus}gpus{tag}", None, aten)
            efficiency = (round(one["correctness_s"] / (gpus * many["correctness_s"]), 3)
                          if one["correctness_s"] and many["correctness_s"] else None)
            rounds.append({"one_gpu": one, "all_gpus": many, "efficiency": efficiency})
        summary["aten"] = dict(rounds[0])
        if len(rounds) > 1:
            summary["aten"]["rounds"] = [{"one_gpu_s": r["one_gpu"]["correctness_s"], "all_gpus_s": r["all_gpus"]["correctness_s"],
                                          "efficiency": r["efficiency"]} for r in rounds]
    if not options.skip_kernels:
        summary["kernels"] = kernel_runs(options, suite)
    text = json.dumps(summary, indent=1)
    open(os.path.join(options.out, "scaling.json"), "w").write(text + "\n")
    print(text)


def kernel_runs(options, suite):
    """The kernel folder's correctness and timing on 1 GPU and on all, and the null test between them."""
    backend = options.kernels
    if options.cuda_kernels_only:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        backend = cuda_kernels_only(os.path.join(root, "generated_kernels"), os.path.join(options.out, "cuda_kernels"))
    kernels = [*suite, "--backend", backend, "--timing", "--topn", str(options.topn)]
    if options.kernel_ops:
        kernels += ["--ops", options.kernel_ops]
    one, one_verdicts = run(options, "kernels_1gpu", "0", kernels)
    many, many_verdicts = run(options, f"kernels_{gpu_count()}gpus", None, kernels)
    return {"one_gpu": one, "all_gpus": many, "null_test": null_test(one_verdicts, many_verdicts)}


if __name__ == "__main__":
    main()
