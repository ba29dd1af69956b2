#!/usr/bin/env python3
"""The suite on one GPU and on every GPU of this machine, through the README's `backendbench run`:
prints the figures of the multi-GPU scaling measurement (wall times, scaling efficiency, the GPUs
the entries used, proof that no timing entry shared its GPU, and the timing null test).

  1. the aten backend's correctness on the whole TorchBench suite (--no-timing), on the first GPU
     (CUDA_VISIBLE_DEVICES=<first>) and then on all; efficiency = time on 1 / (N x time on N);
  2. the kernel folder's correctness and timing (--topn inputs), on 1 GPU and on all; the null
     test compares each timed case's kernel time, reference time and speedup between the two.

Each run is watched from /proc (scripts/entry_sampler.py): the most entries at once on a GPU and
any ./bench beside another entry on its GPU. Phase times are the run's own progress lines (the
build, done before the first measured run, is not in them). Prints a JSON summary at the end and
writes it to <out>/scaling.json.

Usage: scripts/gpu_scaling.py --backendbench build/backendbench --traces DIR [--build build-scaling]
       [--out scaling_results] [--topn 5] [--kernels directory] [--kernel-ops relu,add] [--gpu-slots 4]
       [--skip-aten]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from entry_sampler import EntrySampler  # noqa: E402


def gpu_count():
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return len([line for line in listing.splitlines() if line.startswith("GPU ")])


def phase_seconds(log, phase):
    """The last progress line of a phase: 'correctness  17546/17546 cases  0 failed  2:01 elapsed'."""
    found = re.findall(phase + r"\s+\d+/\d+ cases.*?(\d+):(\d\d) elapsed", log.replace("\r", "\n"))
    return int(found[-1][0]) * 60 + int(found[-1][1]) if found else None


def run(options, name, visible, arguments):
    out = os.path.join(options.out, name)
    command = [options.backendbench, "run", *arguments, "--device", "cuda", "--salt", "0x5eed", "--build", options.build,
               "--out", out, "--gpu-slots", str(options.gpu_slots)]
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
    result = {"exit": process.returncode, "wall_s": round(time.time() - started, 1),
              "correctness_s": phase_seconds(log, "correctness"), "timing_s": phase_seconds(log, "timing"),
              "cases_per_gpu": {}, "failed": sum(v["status"] == "failed" for v in verdicts),
              "most_entries_per_gpu": sampler.most_per_gpu, "timing_beside_another": sampler.timing_shared[:5]}
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
        ratios = [b[key][field] / a[key][field] for key in shared if a[key][field]]
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
    parser.add_argument("--kernel-ops", default="", help="operators of the kernel runs (C++ kernels run on the CPU: "
                        "on TorchBench's largest inputs they take minutes a case)")
    parser.add_argument("--gpu-slots", type=int, default=4)
    parser.add_argument("--skip-aten", action="store_true")
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
        one, _ = run(options, "aten_1gpu", "0", aten)
        many, verdicts = run(options, f"aten_{gpus}gpus", None, aten)
        summary["aten"] = {"one_gpu": one, "all_gpus": many}
        if one["correctness_s"] and many["correctness_s"]:
            summary["aten"]["efficiency"] = round(one["correctness_s"] / (gpus * many["correctness_s"]), 3)
    kernels = [*suite, "--backend", options.kernels, "--timing", "--topn", str(options.topn)]
    if options.kernel_ops:
        kernels += ["--ops", options.kernel_ops]
    one, one_verdicts = run(options, "kernels_1gpu", "0", kernels)
    many, many_verdicts = run(options, f"kernels_{gpus}gpus", None, kernels)
    summary["kernels"] = {"one_gpu": one, "all_gpus": many, "null_test": null_test(one_verdicts, many_verdicts)}
    text = json.dumps(summary, indent=1)
    open(os.path.join(options.out, "scaling.json"), "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
