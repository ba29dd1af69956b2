#!/usr/bin/env python3
"""How long a kernel author waits, in a build folder the quickstart made (build/ by default):

  edit      a kernel file edited (a line of code appended), then `backendbench run --suite smoke
            --backend directory --ops relu` (timed, as smoke is by default; and --no-timing):
            seconds from the edit to the command's end and, timed, to its correctness line (the
            verdict), and the build's share from the command's own progress lines
  select    the selection changed between runs of a build folder that has served smoke and edge:
            a narrower suite, another operator, two operators, both suites again: each run's
            seconds and whether the folder was configured again
  watch     `run ... --watch`: a kernel saved, then the seconds until its quick verdict was printed
            (the saved file alone, served) and until the re-run printed its verdict (and, timed,
            its speedup) and watched again

    scripts/author_loop_speed.py [--build build] [--rounds 3] [--kernels generated_kernels]

Each figure is printed as it is measured, then the medians. The kernel file is restored after.
"""
import argparse
import os
import queue
import re
import statistics
import subprocess
import threading
import time

source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--build", default=os.path.join(source, "build"))
parser.add_argument("--kernels", default=os.path.join(source, "generated_kernels"))
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--parts", default="edit,select,watch")
args = parser.parse_args()
cli = os.path.join(args.build, "backendbench")
kernel = os.path.join(args.kernels, "relu", "relu_implementation_1.cpp")
original = open(kernel).read()
out = os.path.join(args.build, "author_loop_results")
figures = {}


def note(name, seconds):
    figures.setdefault(name, []).append(seconds)
    print(f"  {name}: {seconds:.2f} s", flush=True)


def edit(round_number):
    with open(kernel, "w") as handle:
        # A line of code, as an author's edit is (a comment costs the same: no cache serves a
        # kernel's build, which is compiled in its sandbox by clang).
        stamp = f"{round_number}_{int(time.time() * 1000)}"
        handle.write(original + f"namespace {{ [[maybe_unused]] const int backendbench_edit_{stamp} = {round_number}; }}\n")


def run(*extra):
    """The run's seconds, its output, its build's whole seconds (as it prints them) and the seconds
    until it printed the correctness phase's last line (the verdict: cases passed and failed)."""
    start = time.time()
    process = subprocess.Popen([cli, "run", "--backend", args.kernels, "--out", out, *extra], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    errors = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()), daemon=True)
    reader.start()
    lines, verdict_seconds = [], None
    for line in process.stdout:
        lines.append(line)
        if verdict_seconds is None and re.match(r"^correctness +(\d+)/\1 cases", line):
            verdict_seconds = time.time() - start
    process.wait()
    reader.join()
    seconds = time.time() - start
    stdout = "".join(lines)
    if process.returncode != 0:
        print(stdout[-3000:], "".join(errors)[-3000:])
        raise SystemExit(f"the run ended with status {process.returncode}")
    built = re.search(r"^  built in (\d+):(\d+)$", stdout, re.M)
    return seconds, stdout, (int(built.group(1)) * 60 + int(built.group(2))) if built else None, verdict_seconds


def edits():
    run("--suite", "smoke", "--ops", "relu")  # the folder built for this selection first
    for timed in [True, False]:
        label = "edit -> verdict" + (", timed" if timed else ", --no-timing")
        print(label, flush=True)
        for round_number in range(args.rounds):
            edit(round_number)
            seconds, output, built, verdict = run("--suite", "smoke", "--ops", "relu", *([] if timed else ["--no-timing"]))
            note(label, seconds)
            if timed and verdict is not None:
                note(label + ": its correctness line printed", verdict)
            if built is not None:
                note(label + ": build (whole seconds)", built)


def selections():
    run("--suite", "smoke,edge")
    print("selection changes", flush=True)
    for name, extra in [("edge, add", ["--suite", "edge", "--ops", "add", "--no-timing"]),
                        ("edge, relu and add", ["--suite", "edge", "--ops", "relu,add", "--no-timing"]),
                        ("smoke, relu", ["--suite", "smoke", "--ops", "relu", "--no-timing"]),
                        ("edge, mul", ["--suite", "edge", "--ops", "mul", "--no-timing"]),
                        ("smoke and edge, relu", ["--suite", "smoke,edge", "--ops", "relu", "--no-timing"])]:
        seconds, output, _, _ = run(*extra)
        configured = not re.search(r"^  unchanged$", output, re.M)
        note(f"selection {name}" + (" (configured)" if configured else ""), seconds)


def watch():
    for timed in [True, False]:
        label = "watch: save -> verdict" + (", timed" if timed else ", --no-timing")
        print(label, flush=True)
        command = [cli, "run", "--suite", "smoke", "--backend", args.kernels, "--ops", "relu", "--out", out, "--watch"]
        process = subprocess.Popen(command + ([] if timed else ["--no-timing"]), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()

        def until(prefix, seconds):
            deadline = time.time() + seconds
            while time.time() < deadline:
                try:
                    line = lines.get(timeout=1)
                    if line.startswith(prefix):
                        return line
                except queue.Empty:
                    pass
            return None

        try:
            if not until("watching ", 600):
                raise SystemExit("the watch never started")
            for round_number in range(args.rounds):
                edit(100 + round_number)
                saved = time.time()
                verdict = until("verdict ", 300)
                if not verdict or ": correct on " not in verdict:
                    raise SystemExit(f"no quick verdict of a correct kernel after a save: {verdict}")
                note("watch: save -> quick verdict", time.time() - saved)
                parts = re.search(r"\(([\d.]+) s: build ([\d.]+) s, check ([\d.]+) s\)", verdict)
                if parts:
                    note("watch: quick verdict's own seconds", float(parts.group(1)))
                    note("watch: quick verdict's build", float(parts.group(2)))
                    note("watch: quick verdict's check", float(parts.group(3)))
                if not until("watching ", 300):
                    raise SystemExit("no re-run after a save")
                note(label, time.time() - saved)
        finally:
            process.terminate()
            process.wait()


try:
    parts = args.parts.split(",")
    if "edit" in parts:
        edits()
    if "select" in parts:
        selections()
    if "watch" in parts:
        watch()
finally:
    with open(kernel, "w") as handle:
        handle.write(original)
print("\nmedians:")
for name, values in figures.items():
    print(f"  {name}: {statistics.median(values):.2f} s ({len(values)} runs: " + ", ".join(f"{v:.2f}" for v in values) + ")")
