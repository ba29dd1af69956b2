#!/usr/bin/env python3
"""Checks kernels through a served test executable (--backendbench_serve; job_service.h), the way
the llm backends check candidates, and prints each backend's verdicts: one request per backend,
the manifest's files copied under the kernel root first (so each loads into a spare worker).
Exit status 1 when a backend's outcome is not the expected one (--expect impl3=passed,impl9=failed).

    served_jobs.py --executable build/backendbench_test_smoke --manifest build/generated/kernel_manifests/default.txt
                   --suite smoke --operator relu.default --device cuda --expect impl3=passed,impl9=failed
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time



def copy_under(manifest_path, root):
    """Copies the files a kernel manifest names under `root` (each in its folder's name: a Python
    kernel's module is found by the kernel contract's layout) and writes root/manifest.txt naming
    the copies; returns its path and the names of what it put in `root`."""
    lines, names = [], {"manifest.txt"}
    for line in open(manifest_path).read().split("\n"):
        if line.strip():
            path = line.split()[-1]
            folder = os.path.basename(os.path.dirname(path))
            copied = os.path.join(root, folder, os.path.basename(path))
            os.makedirs(os.path.dirname(copied), exist_ok=True)
            shutil.copy(path, copied)
            lines.append(line.replace(path, copied))
            names.add(folder)
    manifest = os.path.join(root, "manifest.txt")
    with open(manifest, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    return manifest, names


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--executable", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--operator", required=True)
    parser.add_argument("--device", default="")
    parser.add_argument("--expect", required=True, help="backend=passed|failed, comma-separated")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="backendbench_served_")
    manifest, _ = copy_under(args.manifest, root)
    server = subprocess.Popen([os.path.abspath(args.executable), "--backendbench_serve=" + root], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=open(os.path.join(root, "server.log"), "w"), text=True)
    time.sleep(5)  # the first spare worker starts libtorch and CUDA
    wrong = 0
    for expectation in args.expect.split(","):
        backend, expected = expectation.split("=")
        job = {"schema": "backendbench-job", "version": 1, "suite": args.suite, "operator": args.operator, "backend": backend,
               "mode": "check", "case_timeout": 60}
        if args.device:
            job["device"] = args.device
        verdicts, log = os.path.join(root, backend + ".verdicts.jsonl"), os.path.join(root, backend + ".log")
        start = time.time()
        server.stdin.write(json.dumps({"schema": "backendbench-job-request", "version": 1, "job": json.dumps(job),
                                       "verdicts": verdicts, "kernel_manifest": manifest, "log": log}) + "\n")
        server.stdin.flush()
        response = json.loads(server.stdout.readline() or "{}")
        seconds = time.time() - start
        statuses = [json.loads(line)["status"] for line in open(verdicts)] if os.path.exists(verdicts) else []
        outcome = "failed" if "failed" in statuses or not statuses else "passed"
        print(f"{backend}: {outcome} ({statuses.count('passed')} passed, {statuses.count('failed')} failed, "
              f"{seconds:.2f} s served){'' if 'error' not in response else ' error: ' + response['error']}")
        if outcome != expected:
            wrong += 1
            print(f"  expected {expected}; its log:\n" + open(log).read()[-2000:])
    server.stdin.close()
    server.wait(timeout=60)
    shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
