#!/usr/bin/env python3
"""What the backend's registration path costs: per call in ns, and per transformer step as a ratio.

Runs the overhead benchmark (build_tests/tests/backend_overhead_bench.cpp, the target
backendbench_backend_overhead), which times the same work eagerly and with the passthrough
kernels enabled back to back, pair after pair, and prints per benchmark and device the medians
and the median of the per-pair differences (one call) or ratios (one step) with its 95 % interval.
The figures are one machine's, from one run.

    scripts/backend_overhead.py build/build_tests/tests/backendbench_backend_overhead [--filter Transformer]
"""
import argparse
import json
import subprocess
import sys

DEVICES = {"0": "cpu", "1": "cuda"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", help="the backendbench_backend_overhead executable")
    parser.add_argument("--filter", default=".", help="--benchmark_filter (default: all)")
    args = parser.parse_args()

    run = subprocess.run([args.benchmark, f"--benchmark_filter={args.filter}", "--benchmark_format=json"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{args.benchmark} failed ({run.returncode}):\n{run.stderr[-2000:]}")
    report = json.loads(run.stdout)
    context = report["context"]
    print(f"{context['host_name']}: {context['num_cpus']} CPUs; medians of back-to-back pairs (eager, backend)")
    for entry in report["benchmarks"]:
        family, _, device = entry["run_name"].split("/")[:3]
        where = f"{family} {DEVICES[device]}, {entry.get('label', '')}"
        if entry.get("error_occurred"):
            print(f"{where}: skipped ({entry.get('error_message', '')})")
        elif "extra_ns" in entry:
            print(f"{where}: eager {entry['eager_ns']:.0f} ns, backend {entry['backend_ns']:.0f} ns a call; "
                  f"{entry['extra_ns']:+.0f} ns (95 % interval {entry['extra_ns_low']:+.0f} to "
                  f"{entry['extra_ns_high']:+.0f}) over {entry['iterations']} pairs of 256 calls")
        else:
            print(f"{where}: eager {entry['eager_ms']:.3f} ms, backend {entry['backend_ms']:.3f} ms a step; "
                  f"ratio {entry['ratio']:.4f} (95 % interval {entry['ratio_low']:.4f} to "
                  f"{entry['ratio_high']:.4f}) over {entry['iterations']} pairs")


if __name__ == "__main__":
    main()
