#!/usr/bin/env python3
"""./bench's worker dies mid-run (killed from outside, as a crash of ./bench's own process would end
it): the case it was running gets the one rule's failure (job_verdicts.h) with the cause, as a
verdict that names its suite, operator, case and backend; a new worker runs every other case, each
once; the exit status is 1.

  bench_worker_crash.py --bench build/bench
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("--bench", required=True)
parser.add_argument("--filter", default="^(smoke|edge)/relu.default/.*/aten/")
arguments = parser.parse_args()


def fail(message):
    print(f"bench_worker_crash: error: {message}")
    sys.exit(1)


listed = subprocess.run([arguments.bench, "--benchmark_list_tests", f"--benchmark_filter={arguments.filter}"],
                        capture_output=True, text=True, check=True).stdout.split()
selected = {name.split("/iterations:")[0] for name in listed if name.count("/") >= 4}
if len(selected) < 3:
    fail(f"the filter {arguments.filter} selects {len(selected)} benchmarks; expected at least 3")


def worker_of(pid):
    """The ./bench worker (the child of ./bench started with --backendbench_worker) and its
    progress file (the cases it started, one line each)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            for child in children.read().split():
                with open(f"/proc/{child}/cmdline", "rb") as command:
                    argv = command.read().decode(errors="replace").split("\0")
                if "--backendbench_worker" in argv:
                    progress = [a.split("=", 1)[1] for a in argv if a.startswith("--backendbench_progress=")]
                    return int(child), progress[0] if progress else None
    except OSError:
        pass
    return None, None


def line_count(path):
    try:
        with open(path) as text:
            return sum(1 for line in text if line.strip())
    except OSError:
        return 0


with tempfile.TemporaryDirectory() as work:
    verdicts = os.path.join(work, "verdicts.jsonl")
    bench = subprocess.Popen([arguments.bench, f"--benchmark_filter={arguments.filter}", "--backendbench_bench_seconds=0.2",
                              f"--backendbench_verdicts={verdicts}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and bench.poll() is None and time.monotonic() < deadline:
        worker, progress = worker_of(bench.pid)
        if worker is not None and progress is not None and line_count(verdicts) >= 1:
            # Stopped, it can neither finish its case nor start another: killed only in a case it
            # started and has not answered, so that exactly that case has no verdict.
            os.kill(worker, signal.SIGSTOP)
            if line_count(progress) > line_count(verdicts):
                os.kill(worker, signal.SIGKILL)
                killed = worker
            else:
                os.kill(worker, signal.SIGCONT)
        time.sleep(0.02)
    _, stderr = bench.communicate(timeout=600)
    if killed is None:
        fail("./bench ended before its worker could be killed after its first case")
    if bench.returncode != 1:
        fail(f"./bench exited {bench.returncode} after its worker was killed; expected 1\n{stderr[-2000:]}")
    lines = [json.loads(line) for line in open(verdicts) if line.strip()]
    crashed = [v for v in lines if v.get("status") == "failed" and any("crashed: the process received SIGKILL" in e
                                                                       for e in v.get("errors", []))]
    if len(crashed) != 1:
        fail(f"{len(crashed)} verdicts of a case killed with its worker; expected 1\n{stderr[-2000:]}")
    case = crashed[0]
    name = f"{case.get('suite')}/{case.get('operator')}/{case.get('case')}/{case.get('backend')}"
    if name not in selected or case.get("frontend") != "bench":
        fail(f"the killed case's verdict names {name} (frontend {case.get('frontend')}); expected one of the selected "
             f"benchmarks, frontend bench")
    seen = {}
    for v in lines:
        key = f"{v.get('suite')}/{v.get('operator')}/{v.get('case')}/{v.get('backend')}"
        seen[key] = seen.get(key, 0) + 1
    if set(seen) != selected or any(count != 1 for count in seen.values()):
        fail(f"verdicts {seen}; expected one for each of the {len(selected)} selected benchmarks")
    if f"[  CRASHED ] " not in stderr:
        fail("./bench did not say which case crashed")
    print(f"worker {killed} killed; {name} failed with the cause; the other {len(selected) - 1} cases ran once each")
