#!/usr/bin/env python3
"""Runs a generated test executable in N parallel shards and summarises the results per operator.

CTest runs one process per (suite, operator, backend), so one operator with thousands of large
cases (the TorchBench suite's convolution_backward on the CPU) keeps a single process busy for
hours while other cores idle. This script splits the selected cases evenly over N processes
with GoogleTest's sharding (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), each with its own
threads, and prints passed / failed / skipped counts per operator and backend, from the gtest
XML each shard writes. Exit status 1 if any case failed or a shard crashed.

Example (the full TorchBench aten run on the CPU cores of a large machine):
  scripts/run_sharded.py build-torchbench/backendbench_test_torchbench --filter '*.aten/*' \\
      --shards 16 --threads 1 --device cpu --output results-cpu
"""
import argparse
import collections
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("executable")
    parser.add_argument("--filter", default="*", help="gtest filter, e.g. '*.aten/*'")
    parser.add_argument("--shards", type=int, default=os.cpu_count())
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads per shard (OMP_NUM_THREADS)")
    parser.add_argument("--device", choices=["cpu", "cuda"], help="BACKENDBENCH_DEVICE for the aten backend")
    parser.add_argument("--output", default="sharded-results", help="folder for each shard's XML and log")
    parser.add_argument("--case-timeout", type=int, default=0, help="seconds per case (0: none)")
    options = parser.parse_args()

    os.makedirs(options.output, exist_ok=True)
    started = time.time()
    processes = []
    for index in range(options.shards):
        environment = dict(os.environ, GTEST_TOTAL_SHARDS=str(options.shards), GTEST_SHARD_INDEX=str(index),
                           OMP_NUM_THREADS=str(options.threads))
        if options.device:
            environment["BACKENDBENCH_DEVICE"] = options.device
        xml = os.path.join(options.output, f"shard_{index}.xml")
        log = open(os.path.join(options.output, f"shard_{index}.log"), "w")
        command = [options.executable, f"--gtest_filter={options.filter}", f"--gtest_output=xml:{xml}",
                   f"--case-timeout={options.case_timeout}"]
        processes.append((index, xml, subprocess.Popen(command, env=environment, stdout=log, stderr=subprocess.STDOUT)))

    counts = collections.defaultdict(collections.Counter)  # "suite/op.backend" -> outcome -> n
    crashed = []
    for index, xml, process in processes:
        code = process.wait()
        if code not in (0, 1, 77):  # 1: failures, reported in the XML; 77: all skipped
            crashed.append(f"shard {index} exited with {code} (see {options.output}/shard_{index}.log)")
        if not os.path.exists(xml):
            crashed.append(f"shard {index} wrote no XML")
            continue
        for case in ElementTree.parse(xml).getroot().iter("testcase"):
            group = case.get("classname", "?") + "." + case.get("name", "?").split("/")[0]
            if case.find("failure") is not None:
                counts[group]["failed"] += 1
            elif case.find("skipped") is not None or case.get("result") == "skipped":
                counts[group]["skipped"] += 1
            else:
                counts[group]["passed"] += 1

    print(f"{'operator.backend':60} {'passed':>8} {'failed':>8} {'skipped':>8}")
    for group in sorted(counts):
        c = counts[group]
        print(f"{group:60} {c['passed']:8} {c['failed']:8} {c['skipped']:8}")
    total = collections.Counter()
    for c in counts.values():
        total.update(c)
    print(f"total: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped in "
          f"{time.time() - started:.0f} s over {options.shards} shards")
    for line in crashed:
        print(line)
    return 1 if total["failed"] or crashed else 0


if __name__ == "__main__":
    sys.exit(main())
