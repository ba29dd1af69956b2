#!/usr/bin/env python3
"""The backendbench command end to end, as a user runs it: one CTest entry per step (--step).

  bad_arguments   each bad argument: exit status 2, one located error naming the expected form,
                  and no --out folder (no build needed: arguments are checked first)
  run             run on smoke and edge with aten and the example kernels in a build folder of
                  its own; the results folder read as BackendBench's users read it
  report          the report in headless Chromium (report_page.py): its first screen answers what is
                  wrong, slow and skipped; a screenshot in the test's output folder; `report` writes it again
  gpus            the same run on two fake GPUs (CUDA_VISIBLE_DEVICES=0,1, as Slurm sets it) with
                  2 entries per GPU and operators split into parts of 2 cases, one job per entry
                  (--one-job-per-entry; the run step packs): the run writes CTest's
                  resource spec; /proc, sampled meanwhile, never shows more entries on a GPU than
                  its slots, or a timing entry beside another; the verdicts name their GPU, and
                  equal the single run's, every case exactly once, one row per operator
  slurm           the run on smoke and edge as 2 Slurm array tasks of a one-node Slurm this step
                  starts (one_node_slurm.py: 2 fake GPUs, one per task): the merged results equal
                  the single run's, every case exactly once, each task's cases on its own GPU;
                  every daemon is stopped after
  watch           run --watch on a kernel folder of its own: a save that makes the kernel wrong, one
                  that does not compile, then one that makes it right, each with its quick verdict
                  first; the wrong and the right one re-run and reported, the results folder
                  following; the one that does not compile not re-run; a save outside the
                  selection named and not run; SIGINT stops it with the last status
  reward          backendbench reward, the training loop's stream: a correct, a wrong, a broken, a
                  secret-reading and an unreadable candidate and an unknown operator, each answered
                  once with its outcome and reason; planted secrets reach no answer; a timed one
                  has a speedup; the Python client's batch (in order) and stream (by id)
  interrupt       SIGINT to the command alone during correctness (a kernel that never returns), then
                  during timing (a slow kernel): exit 130 within the grace, the results folder with
                  what was judged first, run.json naming the signal and the phase, every case not
                  judged skipped (none failed), nothing timed after a stop in correctness, and no
                  process of the run left (CTest leaves its tests running when it is interrupted)
  workflow        ops lists the suite; new scaffolds a kernel that fails clearly until written;
                  a wrong kernel's failed case run again by the command the console prints; the
                  report of a run with failures, skips and two backends, of a one-kernel run, and
                  of two results folders on one page, in headless Chromium; compare; an operator
                  the suite lacks
"""
import argparse
import csv
import glob
import json
import os
import queue
import re
import signal
import shutil
import subprocess
import sys
import threading
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("--step", required=True, choices=["bad_arguments", "run", "report", "workflow", "gpus", "slurm", "watch", "reward",
                                                  "folder_problems", "interrupt"])
parser.add_argument("--cli", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--source", required=True)
parser.add_argument("--chromium", default="")
args = parser.parse_args()
sys.path.insert(0, os.path.join(args.source, "scripts"))
from entry_sampler import EntrySampler  # noqa: E402  (the checkout's scripts/, found through --source)
from report_page import look_at_report, run_kernels  # noqa: E402  (beside this script)
tree, results = os.path.join(args.work, "tree"), os.path.join(args.work, "results")
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED: " + what)


def cli(*arguments, expect=None):
    done = subprocess.run([args.cli, *arguments], capture_output=True, text=True)
    print("$ backendbench " + " ".join(arguments) + f"  (exit {done.returncode})")
    print(done.stdout[-6000:], done.stderr[-4000:], sep="\n")
    if expect is not None:
        check(done.returncode == expect, f"{' '.join(arguments)}: exit {done.returncode}, expected {expect}")
    return done


def bad_arguments():
    os.makedirs(args.work, exist_ok=True)
    out = os.path.join(args.work, "must_not_exist")
    never_built = os.path.join(args.work, "never_built")
    # A malformed trace (in a folder of good ones) is read before anything is built.
    bad_traces = os.path.join(args.work, "bad_traces")
    os.makedirs(bad_traces, exist_ok=True)
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "traces", "smoke.txt"), bad_traces)
    with open(os.path.join(bad_traces, "bad.txt"), "w") as bad:
        bad.write("Operator: aten.relu.default\ncnt: x, ((T([2], f32),), {})\n")
    cases = [
        (["--suite", bad_traces], r"bad_traces/bad\.txt:2:6: error: malformed count; expected a non-negative integer"),
        (["--suite", "smok"], r"^--suite: error: unknown suite 'smok'; expected smoke, edge, opinfo, facto, torchbench"),
        (["--backend", "tritn"], r"^--backend: error: unknown backend 'tritn'; expected aten, directory"),
        (["--ops", "frobnicate"], r"^--ops: error: unknown operator 'frobnicate'; expected ATen operators"),
        (["--backend", "no/such/kernels"], r"^--backend: error: kernel folder 'no/such/kernels' does not exist; expected"),
        (["--suite", "torchbench", "--topn", "many"], r"^--topn: error: 'many' is not a number of inputs; expected a whole number"),
        (["--device", "tpu"], r"^--device: error: unknown device 'tpu'; expected cpu or cuda"),
        (["--suite", "missing_traces.txt"], r"^--suite: error: trace file or folder 'missing_traces.txt' does not exist"),
        (["--frobnicate"], r"^backendbench run: error: .*frobnicate.*; expected the form `backendbench run --help` shows"),
    ]
    for extra, pattern in cases:
        done = cli("run", "--out", out, "--build", never_built, *extra, expect=2)
        lines = done.stderr.strip().splitlines()
        check(len(lines) == 1, f"{extra}: one error line, got {len(lines)}")
        check(bool(lines) and re.search(pattern, lines[0]) is not None, f"{extra}: message matches {pattern}")
        check(not os.path.exists(out), f"{extra}: nothing written to --out")
    check(not os.path.exists(never_built), "bad arguments configured no build folder")
    # BackendBench's own spelling reaches run.
    done = cli("--suite", "smok", expect=2)
    check(done.stderr.startswith("--suite: error: unknown suite 'smok'"), "the seed's spelling is run's")


def run():
    os.makedirs(args.work, exist_ok=True)
    shutil.rmtree(results, ignore_errors=True)
    done = cli("run", "--suite", "smoke,edge", "--backend", "aten,directory", "--ops", "relu,add", "--device", "cpu",
               "--build", tree, "--out", results, "-j", "2", "--salt", "0x5eed", expect=0)
    check("correctness  " in done.stdout and "timing  " in done.stdout, "progress of both phases printed")
    check(re.search(r"^  directory \(generated_kernels\)\s+\d+\s+1\.00\s+[0-9.]+x", done.stdout, re.M) is not None or
          re.search(r"^  directory\s+\d+\s+1\.00", done.stdout, re.M) is not None, "the kernels' scores printed")
    check(f"report:  {results}/report.html" in done.stdout, "the report's path printed")
    for name in ["full_results.json", "operator_summary.csv", "failed_tests.json", "OVERALL_SUMMARY.md", "verdicts.jsonl",
                 "junit.xml", "benchmark.json", "run.json", "report.html", "logs/build.log", "logs/ctest.log", "logs/bench.log"]:
        check(os.path.isfile(os.path.join(results, name)), f"results folder has {name}")
    if failures:
        return
    # Small jobs share entries (entry_packs.h): fewer processes, every case still there (below).
    junit = open(os.path.join(results, "junit.xml")).read()
    check(re.search(r'<testcase name="(smoke|edge)/pack1of\d+"', junit) is not None, "small jobs were packed into shared entries")
    # Served entries (entry_servers.h): every entry handed its job to a kept supervisor; none ran
    # its executable itself (an entry's output names who served it).
    entries = re.findall(r'<testcase name="([^"]+)"', junit)
    served = re.findall(r"served by backendbench-\d+-[0-9a-f]+/backendbench_test_(smoke|edge)/cpu/\d", junit)
    check(entries and len(served) == len(entries), f"each of the {len(entries)} entries was served ({len(served)} were)")
    # A CUDA kernel on a machine without a GPU: its cases skipped by the command, no entry started.
    cuda_kernel = [json.loads(line) for line in open(os.path.join(results, "verdicts.jsonl")) if '"impl2"' in line]
    if cuda_kernel and all(v["status"] == "skipped" for v in cuda_kernel):
        check(all(v["skip_reason"] == "impl2 is a CUDA kernel and this machine has no CUDA device" for v in cuda_kernel),
              "a CUDA kernel's cases are skipped with the reason")
        check(re.search(r'<testcase name="[^"]*/impl2"', junit) is None, "a CUDA kernel that cannot run here starts no entry")
    run_info = json.load(open(os.path.join(results, "run.json")))
    check(run_info["salt"] == "0x0000000000005eed", "run.json keeps the salt")
    for key in ["torch", "cxx_compiler", "backendbench_commit", "os"]:
        check(run_info["versions"].get(key), f"run.json versions.{key}")
    check(run_info["command"].startswith("backendbench run --suite smoke,edge"), "run.json keeps the command")
    # Each phase's unrounded seconds (what scripts/gpu_scaling.py divides), within the run's own.
    phases = run_info.get("phase_seconds", {})
    check(sorted(phases) == ["correctness", "timing"] and all(0 < phases[p] for p in phases) and
          sum(phases.values()) <= run_info["seconds"], f"run.json has each phase's seconds within the run's ({phases})")
    records = json.load(open(os.path.join(results, "full_results.json")))
    text = open(os.path.join(results, "full_results.json")).read()
    check(not re.search(r"\b(NaN|Infinity)\b", text), "full_results.json is strict JSON")
    correctness = [r for r in records if r["test_type"] == "correctness"]
    performance = [r for r in records if r["test_type"] == "performance"]
    # Every case of the selection: the suites' manifests say how many (of the backends it names:
    # the tree may hold an op library a later step added, when this step runs again).
    expected = 0
    for suite in ["smoke", "edge"]:
        manifest = json.load(open(os.path.join(tree, "generated", suite, "suite.json")))
        for op in manifest["operators"]:
            if re.match(r"^(relu|add)\.", op["operator"]):
                expected += len(op["cases"]) * sum(b["kind"] in ("reference", "kernel") for b in op["backends"])
    skipped = sum(1 for line in open(os.path.join(results, "verdicts.jsonl")) if '"status":"skipped"' in line.replace(" ", ""))
    check(len(correctness) + skipped >= expected, f"{len(correctness)} correctness records + {skipped} skipped cover {expected} cases")
    check(len(performance) > 0, "performance records")
    bench = json.load(open(os.path.join(results, "benchmark.json")))
    check(len(bench["benchmarks"]) >= len(performance), "benchmark.json has every timed case")
    check(json.load(open(os.path.join(results, "failed_tests.json"))) == [], "no failed tests")
    rows = list(csv.reader(open(os.path.join(results, "operator_summary.csv"))))
    check(rows[0] == ["operator", "total_tests", "correctness_tests", "performance_tests", "passed_correctness_tests",
                      "passed_performance_tests", "failed_correctness_tests", "failed_performance_tests", "correctness_rate",
                      "avg_speedup", "geomean_speedup", "max_absolute_error", "max_relative_error", "backend"],
          "operator_summary.csv has the original's columns, then backend")
    for row in rows[1:]:
        check(int(row[1]) == int(row[2]) + int(row[3]), f"total_tests counts tests ({row})")
    summary = open(os.path.join(results, "OVERALL_SUMMARY.md")).read()
    # One scoring rule everywhere: the summary scores each backend as run.json and the console do.
    table = {}
    for line in summary.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| Metric |"):
            labels = cells[1:]
        elif line.startswith("| Correctness Score |") or line.startswith("| Performance Score"):
            table[cells[0]] = dict(zip(labels, cells[1:]))
    check(len(run_info["scores"]) == 2, f"run.json scores two backends ({run_info['scores']})")
    for group in run_info["scores"]:
        label = group["label"]
        correct = f"{group['correctness']:.2f}"
        check(table.get("Correctness Score", {}).get(label) == correct,
              f"OVERALL_SUMMARY.md's correctness of {label} is run.json's {correct} ({table})")
        console = re.search(r"^  " + re.escape(label) + r"\s+\d+\s+([0-9.]+)\s", done.stdout, re.M)
        check(console is not None and console.group(1) == correct, f"the console's correctness of {label} is {correct}")
        if group["performance"] is not None:
            check(table.get("Performance Score (geomean speedup)", {}).get(label) == f"{group['performance']:.2f}",
                  f"OVERALL_SUMMARY.md's performance of {label} is run.json's ({table})")
    junit = open(os.path.join(results, "junit.xml")).read()
    names = re.findall(r'<testcase name="([^"]+)"', junit)
    check(names and all(re.match(r"^(smoke|edge)/(pack\d+of\d+|[\w.]+/\w+(/part\d+of\d+)?)$", n) for n in names) and
          {n.split("/")[0] for n in names} == {"smoke", "edge"}, f"junit.xml names the CTest entries, jobs or packs ({names})")


def equals_single_run(verdicts):
    """The verdicts of a run spread out (GPUs, parts, Slurm tasks) against the single run's (step run):
    every case exactly once, the same correctness verdicts, a timing verdict for every timed case.
    Timing's statuses are not compared: on the CPU, under another's load, it may disagree with itself."""
    def key(v):
        return (v["suite"], v["operator"], v["backend"], v["case"], v.get("frontend"))

    keys = [key(v) for v in verdicts]
    check(len(keys) == len(set(keys)), "every case exactly once")
    single = [json.loads(line) for line in open(os.path.join(results, "verdicts.jsonl"))]
    correctness = {key(v): v["status"] for v in verdicts if v.get("frontend") != "bench"}
    expected = {key(v): v["status"] for v in single if v.get("frontend") != "bench"}
    check(correctness == expected, f"the correctness verdicts equal the single run's ({len(correctness)} against {len(expected)}; "
          f"differing: {sorted(set(correctness.items()) ^ set(expected.items()))[:4]})")
    check({key(v) for v in verdicts if v.get("frontend") == "bench"} == {key(v) for v in single if v.get("frontend") == "bench"},
          "every timed case has its timing verdict")
    check(all(v["status"] != "failed" or v.get("frontend") == "bench" for v in verdicts), "no correctness failure")


def gpus():
    # The spec for plain ctest: the GPUs a scheduler named, the slots asked for.
    spec_path = os.path.join(args.work, "gpus.json")
    done = subprocess.run([args.cli, "gpus", "--slots", "3", "--out", spec_path], capture_output=True, text=True,
                          env=dict(os.environ, CUDA_VISIBLE_DEVICES="4,7"))
    check(done.returncode == 0 and json.load(open(spec_path)) == {
        "version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": "0", "slots": 3}, {"id": "1", "slots": 3}]}]},
        f"backendbench gpus writes the spec of the 2 GPUs CUDA_VISIBLE_DEVICES names ({done.stderr})")
    done = subprocess.run([args.cli, "gpus", "--slots", "0"], capture_output=True, text=True)
    check(done.returncode == 2 and done.stderr.startswith("backendbench gpus: error: --slots"),
          f"a bad --slots is one located error ({done.returncode}: {done.stderr.strip()})")
    gpu_results = os.path.join(args.work, "gpu_results")
    shutil.rmtree(gpu_results, ignore_errors=True)
    environment = dict(os.environ, CUDA_VISIBLE_DEVICES="0,1")
    command = [args.cli, "run", "--suite", "smoke,edge", "--backend", "aten,directory", "--ops", "relu,add", "--build", tree,
               "--out", gpu_results, "-j", "4", "--salt", "0x5eed", "--gpu-slots", "2", "--cases-per-entry", "2",
               "--one-job-per-entry"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    with EntrySampler(process.pid) as sampler:
        stdout, stderr = process.communicate()
    print("$ CUDA_VISIBLE_DEVICES=0,1 " + " ".join(command[1:]) + f"  (exit {process.returncode})", stdout[-6000:],
          stderr[-3000:], sep="\n")
    check(process.returncode in (0, 1), f"the run on two fake GPUs finished (exit {process.returncode})")
    check("GPUs: 2, 2 correctness entries at once on each; timing takes one alone" in stdout, "the run says what it hands out")
    check(set(sampler.most_per_gpu) == {"id:0", "id:1"} and max(sampler.most_per_gpu.values()) <= 2,
          f"no GPU ran more entries at once than its 2 slots, and both were used ({sampler.most_per_gpu})")
    check(not sampler.timing_shared, f"no timing entry shared its GPU ({sampler.timing_shared[:3]})")
    check(sampler.unallocated == 0, f"every entry had a GPU ({sampler.unallocated} samples without)")
    # 4 correctness entries at once (2 GPUs of 2 slots, -j 4) share the cores this test may use.
    share = str(max(1, len(os.sched_getaffinity(0)) // 4))
    check(sampler.threads.get("tests") == {share} or "OMP_NUM_THREADS" in os.environ,
          f"each correctness entry ran with its share of the cores, OMP_NUM_THREADS={share} ({sampler.threads})")
    if failures:
        return
    verdicts = [json.loads(line) for line in open(os.path.join(gpu_results, "verdicts.jsonl"))]
    ran = [v for v in verdicts if v["status"] != "skipped"]
    check(ran and all(v.get("gpu") in ("0", "1") for v in ran), "every verdict names the GPU its entry ran on")
    check({v.get("gpu") for v in ran} == {"0", "1"}, "both GPUs ran cases")
    junit = open(os.path.join(gpu_results, "junit.xml")).read()
    check(re.search(r"edge/add\.Tensor/aten/part2of\d+", junit) is not None, "the entries were split into parts")
    # Served by the supervisors of the GPU CTest gave each entry.
    served_gpus = set(re.findall(r"served by backendbench-\d+-[0-9a-f]+/backendbench_test_(?:smoke|edge)/(\d)/\d", junit))
    check(served_gpus == {"0", "1"}, f"entries were served by the supervisors of both GPUs ({served_gpus})")

    equals_single_run(verdicts)
    rows = [(r[0], r[-1]) for r in csv.reader(open(os.path.join(gpu_results, "operator_summary.csv")))][1:]
    single_rows = [(r[0], r[-1]) for r in csv.reader(open(os.path.join(results, "operator_summary.csv")))][1:]
    check(sorted(rows) == sorted(single_rows) and len(rows) == len(set(rows)),
          f"one row per operator and backend, as in the single run ({rows})")


def slurm():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from one_node_slurm import OneNodeSlurm
    slurm_results = os.path.join(args.work, "slurm_results")
    shutil.rmtree(slurm_results, ignore_errors=True)
    with OneNodeSlurm(os.path.join(args.work, "slurm"), gpus=2) as cluster:
        command = [args.cli, "run", "--suite", "smoke,edge", "--backend", "aten,directory", "--ops", "relu,add", "--build", tree,
                   "--out", slurm_results, "-j", "2", "--salt", "0x5eed", "--slurm", "--slurm-tasks", "2", "--slurm-gpus", "1",
                   "--cases-per-entry", "3"]
        done = subprocess.run(command, capture_output=True, text=True, env=cluster.environment())
        print("$ " + " ".join(command[1:]) + f"  (exit {done.returncode})", done.stdout[-6000:], done.stderr[-3000:], sep="\n")
        if not os.path.isfile(os.path.join(slurm_results, "verdicts.jsonl")):
            print(cluster.logs())
    check(done.returncode in (0, 1), f"the Slurm run finished (exit {done.returncode})")
    check("Slurm: 2 array tasks of 1 GPUs each" in done.stdout, "the run says how it submits")
    if failures:
        return
    log = open(os.path.join(slurm_results, "logs", "ctest.log")).read()
    check("Submitted batch job" in log and "==== Slurm array task 1 ====" in log, "the tasks' logs are in logs/ctest.log")
    verdicts = [json.loads(line) for line in open(os.path.join(slurm_results, "verdicts.jsonl"))]

    equals_single_run(verdicts)
    ran = [v for v in verdicts if v["status"] != "skipped"]
    check(ran and {v.get("gpu") for v in ran} == {"0", "1"}, f"each task ran on its own GPU ({ {v.get('gpu') for v in ran} })")
    junit = open(os.path.join(slurm_results, "junit.xml")).read()
    check(junit.count("<testsuite ") == 2 and '<testcase name="smoke/' in junit and '<testcase name="edge/' in junit,
          "junit.xml holds both tasks' entries")
    check(json.load(open(os.path.join(slurm_results, "run.json"))).get("slurm") == {"tasks": 2, "gpus_per_task": 1},
          "run.json says how it ran")
    leftover = subprocess.run(["pgrep", "-f", os.path.join(args.work, "slurm")], capture_output=True, text=True).stdout.split()
    check(not leftover, f"no daemon left running ({leftover})")


def report():
    page = os.path.join(results, "report.html")
    size = os.path.getsize(page)
    check(size > 1_000_000, f"report.html embeds plotly.js ({size} bytes)")
    with open(page) as handle:
        check("https://" not in re.sub(r"<script>.*?</script>", "", handle.read(), flags=re.S), "the page loads nothing from the network")
    before = os.path.getmtime(page)
    done = cli("report", results, expect=0)
    check("scores (BackendBench's definitions" in done.stdout, "report prints the scores")
    check(os.path.getmtime(page) >= before, "report writes the page again")
    # Two backends, a slow kernel, CUDA kernels skipped on the CPU: as a person sees it.
    kernels, wrong, skipped = run_kernels(results)
    check(not wrong and skipped, "the run has no wrong kernel and skipped tests")
    dom = look_at_report(check, args.chromium, page, os.path.join(args.work, "screenshots", "two_backends_with_skips.png"),
                         kernels=len(kernels), skipped=skipped, groups=["aten", "directory"])
    check("<td>relu.default</td>" in dom, "the operators table is filled")


def folder_problems():
    """A kernel folder with one of each problem beside a correct kernel (gallery/folder_problems,
    its README says which): the run ends with its results folder and exit status 1, each problem is
    one located line of the console and an entry of run.json and of the report's first screen,
    before any build; its kernels' cases fail with it; the correct kernel passes; and the wrong
    kernel's infinite error is a figure every reader takes."""
    gallery = os.path.join(args.source, "build_tests", "gallery", "folder_problems")
    out = os.path.join(args.work, "folder_problems_results")
    shutil.rmtree(out, ignore_errors=True)
    done = cli("run", "--suite", "smoke,edge", "--backend", gallery, "--device", "cpu", "--no-timing", "--build", tree,
               "--out", out, "-j", "2", expect=1)
    expected = {
        "add_": r"add_: error: folder 'add_' names no ATen operator \(read as add_\.default\); .*the nearest: "
                r"add___Tensor \(add_\.Tensor\)",
        "add.Tensor": r"add__Tensor_implementation_1\.cpp: error: 2 files are implementation 1: add__Tensor_implementation_1\.cpp "
                      r"is a declaration of add__Tensor_kernel_impl \(BackendBench's layout.*\.cu is a CUDA kernel.*keep the \.cu alone",
        "mul.Tensor": r"mul__Tensor_implementation_1\.cpp: error: the file holds no kernel: nothing in it is named mul__Tensor_kernel_impl",
        "sub.Tensor": r"sub__Tensor_implementation_1\.py: error: the Python file does not define sub__Tensor_kernel_impl",
        "relu_v2": r"relu_v2\.cpp: error: kernel file name does not follow the kernel contract",
    }
    lines = done.stdout.splitlines()
    for name, pattern in expected.items():
        said = [line for line in lines if re.search(pattern, line)]
        check(len(said) == 1, f"{name}: one located console line ({len(said)})")
    check("the build failed" not in done.stdout and "does not compile" not in done.stdout,
          "every problem was found before the build")
    check(os.path.isfile(os.path.join(out, "report.html")) and os.path.isfile(os.path.join(out, "run.json")),
          "the results folder and its report are written")
    if failures:
        return
    problems = json.load(open(os.path.join(out, "run.json")))["kernel_problems"]
    check(len(problems) == len(expected), f"run.json lists {len(expected)} kernel folder problems ({len(problems)})")
    for name, pattern in expected.items():
        check(sum(bool(re.search(pattern, p["message"])) for p in problems) == 1, f"{name}: in run.json once")
    verdicts = [json.loads(line) for line in open(os.path.join(out, "verdicts.jsonl")) if line.strip()]
    by_kernel = {}
    for v in verdicts:
        by_kernel.setdefault((v["operator"], v["backend"]), []).append(v)
    correct = by_kernel.get(("relu.default", "impl1"), [])
    check(correct and all(v["status"] == "passed" for v in correct), f"the correct relu passes ({len(correct)} cases)")
    wrong = by_kernel.get(("relu.default", "impl2"), [])
    check(wrong and any(v["status"] == "failed" for v in wrong), "the wrong relu fails")
    check(any(v["max_rel_error"] == "Infinity" for v in wrong), "its infinite relative error is written as \"Infinity\"")
    for op, pattern in [("add.Tensor", expected["add.Tensor"]), ("mul.Tensor", expected["mul.Tensor"]),
                        ("sub.Tensor", expected["sub.Tensor"])]:
        cases = by_kernel.get((op, "impl1"), [])
        check(cases and all(v["status"] == "failed" and re.search(pattern, v["errors"][0]) for v in cases),
              f"{op} impl1: each of its {len(cases)} cases fails with its problem")
    # The readers of a results folder take the non-finite figures: report and compare.
    cli("report", out, expect=0)
    cli("compare", out, out, expect=0)
    kernels, wrong_kernels, skipped = run_kernels(out)
    dom = look_at_report(check, args.chromium, os.path.join(out, "report.html"),
                         os.path.join(args.work, "screenshots", "folder_problems.png"),
                         kernels=len(kernels), wrong=wrong_kernels, skipped=skipped)
    if dom:
        listed = re.findall(r'<li class="kernel-problem">', dom)
        check(len(listed) == len(expected), f"the report lists each problem ({len(listed)})")
        check("problems-section" in (re.search(r'data-first-screen="([^"]*)"', dom) or [None, ""])[1],
              "the problems are on the report's first screen")


def interrupt():
    kernels = os.path.join(args.work, "interrupted_kernels")
    shutil.rmtree(kernels, ignore_errors=True)
    relu_loop = ("  const at::Tensor input = self.contiguous();\n"
                 "  at::Tensor output = at::empty(input.sizes(), input.options());\n"
                 "  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), \"relu\", [&] {\n"
                 "    const scalar_t* in = input.data_ptr<scalar_t>();\n"
                 "    scalar_t* out = output.data_ptr<scalar_t>();\n"
                 "    for (int64_t i = 0; i < input.numel(); ++i) out[i] = in[i] < scalar_t(0) ? scalar_t(0) : in[i];\n"
                 "  });\n"
                 "  return output;\n}\n")
    head = "#include <ATen/ATen.h>\n#include <ATen/Dispatch.h>\n#include <chrono>\n#include <thread>\n"
    sources = {
        "relu/relu_implementation_1.cpp": head + "at::Tensor relu_kernel_impl(const at::Tensor& self) {\n" + relu_loop,
        # Right, and busy for 20 ms a call: timing it takes seconds a case.
        "relu/relu_implementation_2.cpp": head + "at::Tensor relu_kernel_impl(const at::Tensor& self) {\n"
        "  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);\n"
        "  while (std::chrono::steady_clock::now() < until) {}\n" + relu_loop,
        # Never returns: its first case is in progress whenever the run is stopped.
        "add/add_implementation_1.cpp": head + "at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, "
        "const at::Scalar& alpha) {\n  while (true) std::this_thread::sleep_for(std::chrono::seconds(1));\n}\n",
    }
    for name, text in sources.items():
        os.makedirs(os.path.dirname(os.path.join(kernels, name)), exist_ok=True)
        with open(os.path.join(kernels, name), "w") as handle:
            handle.write(text)

    def left_over():
        """Processes of the run still alive: any whose command line names the build folder."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                command = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if tree in command and int(pid) != os.getpid():
                found.append(f"{pid}: {command[:160]}")
        return found

    def stopped_run(suites, ops, ready, out):
        """Runs the command, sends it SIGINT once ready() holds, and returns (exit, stdout, seconds
        from the signal to the exit, run.json, verdicts)."""
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(os.path.join(tree, "results", "smoke"), ignore_errors=True)
        shutil.rmtree(os.path.join(tree, "backendbench_logs", "bench"), ignore_errors=True)
        command = [args.cli, "run", "--suite", suites, "--backend", kernels, "--ops", ops, "--device", "cpu", "--build", tree,
                   "--out", out, "-j", "2", "--one-job-per-entry"]
        print("$ " + " ".join(command))
        output = tempfile.TemporaryFile(mode="w+")
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, text=True,
                                   env=dict(os.environ, BACKENDBENCH_CASE_TIMEOUT="900"))
        deadline = time.time() + 1200
        while process.poll() is None and not ready() and time.time() < deadline:
            time.sleep(0.2)
        signalled = time.time()
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        took = time.time() - signalled
        output.seek(0)
        text = output.read()
        print(text[-5000:])
        described = json.load(open(os.path.join(out, "run.json"))) if os.path.isfile(os.path.join(out, "run.json")) else {}
        verdicts = ([json.loads(line) for line in open(os.path.join(out, "verdicts.jsonl")) if line.strip()]
                    if os.path.isfile(os.path.join(out, "verdicts.jsonl")) else [])
        return status, text, took, described, verdicts

    def lines_in(pattern):
        return sum(len(open(path).read().splitlines()) for path in glob.glob(pattern))

    not_run = "not run: the run was interrupted (SIGINT) before this case had a verdict"
    # Stopped in correctness: once a case of the right relu has its verdict; the add (edge's) never
    # returns. Only smoke is timed.
    relu_files = os.path.join(tree, "results", "smoke", "relu.default", "impl1*.verdicts.jsonl")
    status, text, took, described, verdicts = stopped_run("smoke,edge", "relu,add", lambda: lines_in(relu_files) > 0,
                                                          os.path.join(args.work, "interrupted_correctness"))
    check(status == 130, f"stopped in correctness: exit {status}, expected 130")
    check(took < 40, f"it ended {took:.1f} s after the signal (the grace is 10 s)")
    check("interrupted (SIGINT) during correctness" in text, "the console says the run was interrupted, and when")
    check(described.get("interrupted") == {"signal": "SIGINT", "phase": "correctness"},
          f"run.json: interrupted by SIGINT in correctness ({described.get('interrupted')})")
    add = [v for v in verdicts if v["operator"] == "add.Tensor"]
    check(add and all(v["status"] == "skipped" and v["skip_reason"] == not_run for v in add),
          f"each of the never-returning add's {len(add)} cases is skipped as not run")
    check(any(v["operator"] == "relu.default" and v["status"] == "passed" for v in verdicts),
          "the relu cases judged before the signal passed and are kept")
    check(not any(v["status"] == "failed" for v in verdicts), "no case failed for the stop")
    check(not any(v["frontend"] == "bench" for v in verdicts), "nothing was timed after a stop in correctness")
    time.sleep(2)
    check(not left_over(), "no process of the run is left: " + "; ".join(left_over()))
    # Stopped in timing: once ./bench has written a verdict; the slow relu's cases take seconds each.
    bench_files = os.path.join(tree, "backendbench_logs", "bench", "*.verdicts.jsonl")
    status, text, took, described, verdicts = stopped_run("smoke", "relu", lambda: lines_in(bench_files) > 0,
                                                          os.path.join(args.work, "interrupted_timing"))
    check(status == 130, f"stopped in timing: exit {status}, expected 130")
    check(took < 40, f"it ended {took:.1f} s after the signal")
    check(described.get("interrupted") == {"signal": "SIGINT", "phase": "timing"},
          f"run.json: interrupted by SIGINT in timing ({described.get('interrupted')})")
    checked = [v for v in verdicts if v["frontend"] == "tests"]
    timed = [v for v in verdicts if v["frontend"] == "bench"]
    check(checked and all(v["status"] == "passed" for v in checked), f"every correctness case passed and is kept ({len(checked)})")
    # A timed case may fail on its own figures on a loaded machine; none for want of a verdict.
    check(any(v["status"] != "skipped" for v in timed), "the cases timed before the signal are kept")
    check(any(v["status"] == "skipped" and v["skip_reason"] == not_run for v in timed), "the cases not timed are skipped as not run")
    check(not any(v["status"] == "failed" and "no verdict" in " ".join(v["errors"]) for v in timed),
          "no timed case failed for the stop")
    time.sleep(2)
    check(not left_over(), "no process of the run is left: " + "; ".join(left_over()))


def workflow():
    done = cli("ops", "--suite", "smoke", "--build", tree, expect=0)
    check(re.search(r"^  relu\.default\s+\d+\s+impl1, impl2 \(cuda\), impl3 \(cuda\)$", done.stdout, re.M) is not None, "ops lists relu's kernels")
    # A kernel folder of our own: the examples' relu kernels and their shared headers.
    kernels = os.path.join(args.work, "kernels")
    shutil.rmtree(kernels, ignore_errors=True)
    shutil.copytree(os.path.join(args.source, "generated_kernels"), kernels)
    for other in ["add", "mul", "div"]:
        shutil.rmtree(os.path.join(kernels, other))
    # Without the two-part CUDA example, so that the kernels below are impl3, impl4 and impl5.
    os.remove(os.path.join(kernels, "relu", "relu_implementation_3.cu"))
    done = cli("new", "relu", "--kernels", kernels, expect=0)
    created = os.path.join(kernels, "relu", "relu_implementation_3.cpp")
    check(f"created {created}" in done.stdout, "new names the file it created")
    check("at::Tensor relu_kernel_impl(const at::Tensor& self)" in open(created).read(), "the exact signature")
    # A kernel that does not compile fails its own cases; the others still run.
    with open(os.path.join(kernels, "relu", "relu_implementation_4.cpp"), "w") as handle:
        handle.write("#include <ATen/ATen.h>\nat::Tensor relu_kernel_impl(const at::Tensor& self) { return self.clamp_min(0) }\n")
    # A Python kernel in the original's format, beside them.
    with open(os.path.join(kernels, "relu", "relu_implementation_v5.py"), "w") as handle:
        handle.write("import torch\n\ndef relu_kernel_impl(*args, **kwargs):\n    return torch.clamp(args[0], min=0)\n")
    new_results = os.path.join(args.work, "new_results")
    shutil.rmtree(new_results, ignore_errors=True)
    done = cli("run", "--suite", "smoke", "--backend", "aten," + kernels, "--ops", "relu", "--device", "cpu", "--no-timing",
               "--build", tree, "--out", new_results, "-j", "2", expect=1)
    check("does not compile: " + os.path.join(kernels, "relu", "relu_implementation_4.cpp") in done.stdout,
          "the kernel that does not compile is named")
    failed = json.load(open(os.path.join(new_results, "failed_tests.json")))
    check(failed and {r["backend"] for r in failed} == {"impl3", "impl4"}, "only the new kernel and the broken one fail")
    check(failed and all("is not written yet" in r["error_msg"] for r in failed if r["backend"] == "impl3"),
          "the new kernel's message says it is not written yet")
    check(failed and all("did not compile" in r["error_msg"] and "error" in r["error_msg"]
                         for r in failed if r["backend"] == "impl4"), "the broken kernel's message quotes the compiler")
    passed = [r for r in json.load(open(os.path.join(new_results, "full_results.json"))) if r["backend"] == "impl1"]
    check(passed and all(r["is_correct"] for r in passed), "the kernel that compiles still ran and passed")
    python_kernel = [r for r in json.load(open(os.path.join(new_results, "full_results.json"))) if r["backend"] == "impl5"]
    check(python_kernel and all(r["is_correct"] for r in python_kernel), "the .py kernel ran and passed")
    # The console's command runs the new kernel's first failed case again, with the run's salt.
    again = re.search(r"^  relu\.default impl3 \(.*\), \d+ of \d+ failed:\n    (.*)$", done.stdout, re.M)
    check(again is not None, "the console prints a command for the wrong kernel's first failed case")
    if again:
        salt = json.load(open(os.path.join(new_results, "run.json")))["salt"]
        rerun = subprocess.run(again.group(1), shell=True, capture_output=True, text=True, timeout=300)
        print("$ " + again.group(1) + f"  (exit {rerun.returncode})\n" + rerun.stdout[-3000:] + rerun.stderr[-2000:])
        check(rerun.returncode != 0 and "is not written yet" in rerun.stdout + rerun.stderr,
              "the command fails the same way")
        ran = re.findall(r"^\[ RUN      \] smoke/relu__default\.impl3/(\w+)$", rerun.stdout, re.M)
        check(len(ran) == 1 and ran[0] in {r["case"] for r in failed if r["backend"] == "impl3"},
              f"it runs that one case, a failed one of impl3 ({ran})")
        check(f"salt {salt}" in rerun.stdout + rerun.stderr, "with the run's salt")
    broken = re.search(r"^  relu\.default impl4 \(.*\), \d+ of \d+ failed:\n    (.*)$", done.stdout, re.M)
    check(broken is not None and broken.group(1).startswith("backendbench run --suite smoke --backend ") and
          "--ops relu.default" in broken.group(1), "the kernel that did not compile: the run of its operator shows why again")
    kernels_seen, wrong, skipped = run_kernels(new_results)
    check(wrong == {("relu.default", "impl3"), ("relu.default", "impl4")}, f"two wrong kernels ({wrong})")
    look_at_report(check, args.chromium, os.path.join(new_results, "report.html"),
                   os.path.join(args.work, "screenshots", "failures_skips_two_backends.png"), kernels=len(kernels_seen),
                   wrong=sorted(wrong), skipped=skipped, groups=["aten", kernels])
    # An operator whose only kernel does not compile costs only its own cases: the run goes on,
    # the results folder is written, the other operator's kernel is scored, the exit status is 1.
    lone = os.path.join(args.work, "lone_broken_kernels")
    shutil.rmtree(lone, ignore_errors=True)
    os.makedirs(os.path.join(lone, "relu"))
    os.makedirs(os.path.join(lone, "add"))
    shutil.copy(os.path.join(args.source, "generated_kernels", "relu", "relu_implementation_1.cpp"), os.path.join(lone, "relu"))
    # Its compile also tries to read a secret planted in the build folder: the compiler runs in
    # the sandbox (backendbench-build-sandbox), where the build folder is hidden, so the error it
    # gives quotes nothing of it.
    planted = os.path.join(tree, "planted_build_secret.txt")
    secret = "sk-build-secret-" + os.urandom(8).hex()
    with open(planted, "w") as handle:
        handle.write(secret + "\n")
    with open(os.path.join(lone, "add", "add_implementation_1.cpp"), "w") as handle:
        handle.write(f'#include <ATen/ATen.h>\n#include "{planted}"\n'
                     "at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, "
                     "const at::Scalar& alpha) { return self + other * alpha }\n")
    # A second one reaches for the same secret through a link in its own folder (a downloaded
    # folder's add/notes.h -> a secret): links are not followed into the sandbox, so it finds
    # nothing there either, in the run's build and in the build of each kernel alone.
    os.symlink(planted, os.path.join(lone, "add", "notes.h"))
    with open(os.path.join(lone, "add", "add_implementation_2.cpp"), "w") as handle:
        handle.write('#include <ATen/ATen.h>\n#include "notes.h"\n'
                     "at::Tensor add_kernel_impl(const at::Tensor& self, const at::Tensor& other, "
                     "const at::Scalar& alpha) { return self + other * alpha; }\n")
    lone_results = os.path.join(args.work, "lone_results")
    shutil.rmtree(lone_results, ignore_errors=True)
    done = cli("run", "--suite", "smoke,edge", "--backend", lone, "--ops", "relu,add.Tensor", "--device", "cpu", "--no-timing",
               "--build", tree, "--out", lone_results, "-j", "2", expect=1)
    check(os.path.isfile(os.path.join(lone_results, "full_results.json")), "a lone broken kernel: the results folder is written")
    if os.path.isfile(os.path.join(lone_results, "full_results.json")):
        lone_records = json.load(open(os.path.join(lone_results, "full_results.json")))
        relu_records = [r for r in lone_records if r["op_name"] == "relu.default"]
        add_records = [r for r in lone_records if r["op_name"] == "add.Tensor"]
        check(relu_records and all(r["is_correct"] for r in relu_records), "a lone broken kernel: relu's kernel still ran and passed")
        check(add_records and all(not r["is_correct"] and "did not compile" in r.get("error_msg", "") for r in add_records),
              "a lone broken kernel: add.Tensor's cases fail with the compiler's error")
    seen = done.stdout + done.stderr + open(os.path.join(tree, "backendbench_logs", "build.log")).read()
    for folder, _, names in os.walk(lone_results):
        seen += "".join(open(os.path.join(folder, name), errors="replace").read() for name in names)
    check(secret not in seen, "the kernels' compiles could not read the secret in the build folder, by its path or by a link "
          "(not in any output)")
    check("does not compile: " + os.path.join(lone, "add", "add_implementation_2.cpp") in done.stdout,
          "the kernel that includes a link to the secret does not compile")
    os.remove(planted)
    # An op library as a backend: torch_decomp's relu passes; its add.Tensor runs aten::add.Tensor underneath.
    library_results = os.path.join(args.work, "library_results")
    shutil.rmtree(library_results, ignore_errors=True)
    done = cli("run", "--suite", "edge", "--backend", "torch_decomp", "--ops", "relu,add.Tensor", "--device", "cpu",
               "--no-timing", "--build", tree, "--out", library_results, "-j", "2", expect=1)
    check(re.search(r"^  torch_decomp\s+2\s+0\.50\s", done.stdout, re.M) is not None, "the library is a row of the scores")
    library = json.load(open(os.path.join(library_results, "full_results.json")))
    check({r["backend"] for r in library} == {"torch_decomp"}, "only the library's backend ran")
    check(all(r["is_correct"] for r in library if r["op_name"] == "relu.default"), "its relu passes")
    check(any("falls back to ATen: it dispatches aten::add.Tensor" in r.get("error_msg", "") for r in library
              if r["op_name"] == "add.Tensor"), "its add.Tensor is caught falling back")
    check(json.load(open(os.path.join(library_results, "run.json")))["op_libraries"] == ["torch_decomp"], "run.json names it")
    rows = {(r[0], r[-1]): r for r in csv.reader(open(os.path.join(new_results, "operator_summary.csv")))}
    check(rows.get(("relu.default", "impl3"), [None] * 9)[8] == "0", "impl3's correctness_rate is 0")
    done = cli("compare", results, results, "--fail-on-regression", expect=0)
    check("0 regressions" in done.stdout, "a run compared with itself has no regressions")
    done = cli("compare", results, new_results, expect=0)
    check(re.search(r"relu\.default\s+impl3\s+0\s+[1-9]\d*\s+-\s+-\s+only B", done.stdout) is not None,
          "compare shows the new kernel's failures")
    page_path = os.path.join(new_results, "compare.html")
    check(f"the comparison as a page: {page_path}" in done.stdout, "compare names its page")
    page = open(page_path).read() if os.path.exists(page_path) else ""
    check(re.search(r"<tr class=\"worse\"><td>relu\.default</td><td>impl3</td><td class=\"n\">0</td><td class=\"n\">[1-9]", page)
          is not None, "the page shows the new kernel's failures as worse")
    # One kernel, timed: the page a kernel author sees first.
    one = os.path.join(args.work, "one_kernel")
    shutil.rmtree(one, ignore_errors=True)
    os.makedirs(os.path.join(one, "relu"))
    shutil.copy(os.path.join(args.source, "generated_kernels", "relu", "relu_implementation_1.cpp"), os.path.join(one, "relu"))
    one_results = os.path.join(args.work, "one_kernel_results")
    shutil.rmtree(one_results, ignore_errors=True)
    cli("run", "--suite", "smoke", "--backend", one, "--ops", "relu", "--device", "cpu", "--build", tree, "--out", one_results,
        "-j", "2", expect=0)
    if os.path.isfile(os.path.join(one_results, "report.html")):
        look_at_report(check, args.chromium, os.path.join(one_results, "report.html"),
                       os.path.join(args.work, "screenshots", "one_kernel.png"), kernels=1, groups=[one])
    # Two results folders on one page, each run's backends under its folder's name.
    both = os.path.join(args.work, "both_runs.html")
    done = cli("report", results, new_results, "--html", both, expect=0)
    check(re.search(r"^results \(.*\): backendbench run --suite smoke,edge", done.stdout, re.M) is not None and
          re.search(r"^new_results \(.*\): backendbench run --suite smoke ", done.stdout, re.M) is not None,
          "report prints each folder's scores under its tag")
    check(f"report: {both}" in done.stdout, "report names the page it wrote")
    if os.path.isfile(both):
        first, second = run_kernels(results), run_kernels(new_results)
        look_at_report(check, args.chromium, both, os.path.join(args.work, "screenshots", "two_runs.png"),
                       kernels=len(first[0]) + len(second[0]),
                       wrong=[(op, "new_results: " + backend) for op, backend in sorted(second[1])],
                       skipped=first[2] | second[2], groups=["results: aten", "results: directory", "new_results: aten"])
    # A trace file of our own is a suite named after it.
    traces = os.path.join(args.work, "my-model.txt")
    with open(traces, "w") as handle:
        handle.write("Operator: aten.relu.default\ncnt: 3, ((T([7, 5], f32),), {})\ncnt: 1, ((T([64], f16),), {})\n")
    own_results = os.path.join(args.work, "own_results")
    shutil.rmtree(own_results, ignore_errors=True)
    done = cli("run", "--suite", traces, "--backend", "aten", "--no-timing", "--device", "cpu", "--build", tree,
               "--out", own_results, "-j", "2", expect=0)
    records = json.load(open(os.path.join(own_results, "full_results.json")))
    check(len(records) == 2 and {r["suite"] for r in records} == {"my_model"}, "the trace file's two inputs, as suite my_model")
    out = os.path.join(args.work, "not_written")
    done = cli("run", "--suite", "smoke", "--backend", "directory", "--ops", "conv2d", "--build", tree, "--out", out, expect=2)
    check(done.stderr.startswith("--ops: error: no cases of 'conv2d' in suite smoke; expected operators the suites have"),
          "an operator the suite lacks is named")
    check(not os.path.exists(out), "nothing written for it")


def watch():
    kernels = os.path.join(args.work, "watched_kernels")
    shutil.rmtree(kernels, ignore_errors=True)
    os.makedirs(os.path.join(kernels, "relu"))
    kernel = os.path.join(kernels, "relu", "relu_implementation_1.cpp")
    right = "#include <ATen/ATen.h>\nat::Tensor relu_kernel_impl(const at::Tensor& self) { return self.clamp_min(0); }\n"
    wrong = "#include <ATen/ATen.h>\nat::Tensor relu_kernel_impl(const at::Tensor& self) { return self.clone(); }\n"
    broken = "#include <ATen/ATen.h>\nat::Tensor relu_kernel_impl(const at::Tensor& self) { return nope; }\n"
    with open(kernel, "w") as handle:
        handle.write(right)
    out = os.path.join(args.work, "watch_results")
    shutil.rmtree(out, ignore_errors=True)
    command = [args.cli, "run", "--suite", "smoke", "--backend", kernels, "--ops", "relu", "--device", "cpu", "--no-timing",
               "--watch", "--build", tree, "--out", out, "-j", "2", "--salt", "0x5eed"]
    print("$ " + " ".join(command))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout] and lines.put(None), daemon=True).start()

    def until(pattern, seconds):
        """The output up to the first line matching pattern (None: the command ended or the time ran out)."""
        seen, deadline = [], time.time() + seconds
        while time.time() < deadline:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                break
            if line is None:
                break
            print(line, end="")
            seen.append(line)
            if re.search(pattern, line):
                return "".join(seen)
        return None

    def failed_backends():
        return {r["backend"] for r in json.load(open(os.path.join(out, "failed_tests.json")))}

    try:
        first = until(r"^watching ", 900)
        check(first is not None, "the first run ended and the folder is watched")
        if first is None:
            return
        check(os.path.isfile(os.path.join(out, "run.json")) and not failed_backends(), "the first run's results: all passed")
        check("quick verdicts ready in " in first, "the quick verdicts started before the first save")
        saves = []
        # A save that does not compile: its quick verdict gives the compiler's first error, located in
        # the kernel folder, and no full run follows (the results folder keeps the run before).
        for text, should_fail in [(wrong, True), (broken, None), (right, False)]:
            with open(kernel, "w") as handle:
                handle.write(text)
            saved = time.time()
            rerun = until(r"^watching ", 300)
            if should_fail is None:
                check(rerun is not None and "verdict relu/relu_implementation_1.cpp: does not build" in rerun and
                      re.search(r"^  relu/relu_implementation_1\.cpp:2:\d+: error: ", rerun or "", re.M) is not None,
                      "a save that does not compile: the quick verdict names the error in the kernel folder's terms")
                check(rerun is not None and "not run again: it does not compile" in rerun and "running it again" not in rerun,
                      "a save that does not compile runs nothing more")
                check(rerun is not None and "attempts" not in rerun, "no candidate slot's path in what is printed")
                check(failed_backends() == {"impl1"}, "the results folder keeps the run before")
                continue
            quick = re.search(r"^verdict relu/relu_implementation_1\.cpp: (correct on|WRONG on) ", rerun or "", re.M)
            check(quick is not None and quick.group(1) == ("WRONG on" if should_fail else "correct on"),
                  f"a save's quick verdict: {'wrong' if should_fail else 'correct'}")
            check(quick is not None and rerun.index(quick.group(0)) < rerun.find("changed: relu.default; running it again"),
                  "the quick verdict comes before the full run")
            check(rerun is not None and "changed: relu.default; running it again" in rerun, "a save re-runs its operator")
            check(rerun is not None and re.search(r"^  unchanged$", rerun, re.M) is not None, "a re-run configures nothing")
            if rerun is None:
                return
            saves.append(time.time() - saved)
            row = re.search(r"^  relu\.default\s+impl1\s+(yes|NO)\b", rerun, re.M)
            check(row is not None and row.group(1) == ("NO" if should_fail else "yes"),
                  f"the re-run prints impl1 {'wrong' if should_fail else 'correct'}")
            check(failed_backends() == ({"impl1"} if should_fail else set()), "the results folder follows the save")
        # A save outside the run's selection is named, and nothing runs.
        os.makedirs(os.path.join(kernels, "add"))
        with open(os.path.join(kernels, "add", "add_implementation_1.cpp"), "w") as handle:
            handle.write("// not yet\n")
        check(until(r"no operator of the run's selection", 60) is not None, "a save outside the selection is named")
        process.send_signal(signal.SIGINT)
        check(until(r"^stopped watching", 60) is not None, "SIGINT stops the watch")
        check(process.wait(timeout=60) == 0, "the exit status is the last run's (it passed)")
        print("save -> verdict (s), build and check, no timing: " + ", ".join(f"{seconds:.2f}" for seconds in saves))
    finally:
        if process.poll() is None:
            process.kill()


def reward():
    home = os.path.join(args.work, "reward_home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    secret = "sk-ant-PLANTED-reward-7f3a9c"
    with open(os.path.join(home, "secret.txt"), "w") as handle:
        handle.write(secret + "\n")
    environment = dict(os.environ, HOME=home, ANTHROPIC_API_KEY=secret)
    head = "#include <ATen/ATen.h>\n#include <cstdlib>\nat::Tensor relu_kernel_impl(const at::Tensor& self) {"
    candidates = [
        {"id": "right", "op": "relu", "source": head + " return self.clamp_min(0); }\n"},
        {"id": "wrong", "op": "relu", "source": head + " return self.clone(); }\n"},
        {"id": "broken", "op": "relu", "source": head + " return self.clamp_min(0) }\n"},
        # Right only where it cannot see the key: the sandbox's environment has none.
        {"id": "reads_key", "op": "relu",
         "source": head + " if (std::getenv(\"ANTHROPIC_API_KEY\")) return self.clone(); return self.clamp_min(0); }\n"},
        # Its compiler error would quote the file, were it visible to the build.
        {"id": "includes_secret", "op": "relu", "source": f'#include "{home}/secret.txt"\n' + head + " return self; }\n"},
        {"id": "unknown", "op": "frobnicate", "source": "// nothing\n"},
    ]
    lines = "".join(json.dumps(c) + "\n" for c in candidates) + '{"id": "unreadable", "op": "relu"}\nnot json at all\n'
    command = [args.cli, "reward", "--suite", "smoke,edge", "--device", "cpu", "--no-timing", "--build", tree,
               "--salt", "0x5eed", "--concurrency", "2"]
    print("$ " + " ".join(command))
    done = subprocess.run(command, input=lines, capture_output=True, text=True, env=environment)
    print(done.stdout[-6000:], done.stderr[-4000:], sep="\n")
    check(done.returncode == 0, f"reward exits 0 at the end of its input (exit {done.returncode})")
    rewards = [json.loads(line) for line in done.stdout.splitlines()]
    check(len(rewards) == 8, f"one answer per request, and nothing else on standard output ({len(rewards)})")
    by_id = {r["id"]: r for r in rewards}
    check(all(r["schema"] == "backendbench-reward" and r["version"] == 1 for r in rewards), "each answer names its schema")
    right = by_id.get("right", {})
    check(right.get("outcome") == "passed" and right.get("correct") is True and right.get("failed") == 0 and
          right.get("passed", 0) > 0, "a correct kernel passes on every case")
    cases = sum(len(op["cases"]) for suite in ["smoke", "edge"]
                for op in json.load(open(os.path.join(tree, "generated", suite, "suite.json")))["operators"]
                if op["operator"] == "relu.default")
    check(right.get("passed", 0) + right.get("skipped", 0) == cases, f"holdout: every case of relu in the suites ({cases})")
    wrong = by_id.get("wrong", {})
    check(wrong.get("outcome") == "failed" and wrong.get("correct") is False and "differ" in wrong.get("reason", "") and
          wrong.get("failed_case", "").startswith(("smoke/", "edge/")), "a wrong kernel fails with its first case and reason")
    broken = by_id.get("broken", {})
    check(broken.get("outcome") == "build_failed" and
          re.search(r"relu_implementation_1\.cpp:3:\d+: error", broken.get("reason", "")) is not None,
          "a kernel that does not compile: the compiler's first error, located in its own file")
    check(by_id.get("reads_key", {}).get("correct") is True, "the candidate's process has no key to read")
    includes = by_id.get("includes_secret", {})
    check(includes.get("outcome") == "build_failed", "an #include of a file in $HOME finds nothing")
    check(secret not in done.stdout and secret not in done.stderr, "no planted secret reaches any answer or message")
    check(by_id.get("unknown", {}).get("outcome") == "error" and
          "not an operator of the suites smoke, edge" in by_id.get("unknown", {}).get("reason", ""), "an unknown operator is named")
    check(by_id.get("unreadable", {}).get("outcome") == "error" and
          "<stdin>:7:" in by_id.get("unreadable", {}).get("reason", "") and "no source" in by_id.get("unreadable", {}).get("reason", ""),
          "a request without a source: its error, located, under its id")
    check(any(r["id"] == "" and "<stdin>:8:" in r["reason"] and "not JSON" in r["reason"] for r in rewards),
          "a line that is not JSON: its error, located")

    def answer_of(process, candidate):
        """Sends one candidate to a running `backendbench reward` and reads its answer."""
        process.stdin.write(json.dumps(candidate) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        print(line, end="")
        return json.loads(line) if line.strip() else {}

    def parent_of(pid):
        try:
            return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return None

    def descendants(root):
        """The processes under `root`: this reward's, not those of tests running beside it."""
        children = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            parent = parent_of(pid)
            if parent is not None:
                children.setdefault(parent, []).append(int(pid))
        found, todo = [], [root]
        while todo:
            for child in children.get(todo.pop(), []):
                found.append(child)
                todo.append(child)
        return found

    def served_under(root, executable=None):
        """The served executables under `root` (`--backendbench_serve=`), of one name if given."""
        found = []
        for pid in descendants(root):
            try:
                words = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if (executable is None or os.path.basename(words[0]) == executable) and \
                    any(w.startswith(b"--backendbench_serve=") for w in words):
                found.append(pid)
        # A served executable forks to start a spare kernel worker; until that child's exec, it has
        # the same command line: a copy whose parent is a served executable is that child.
        return [pid for pid in found if parent_of(pid) not in found]

    # Timed: a correct kernel's speedup over ATen and its interval. Timings are served by one
    # ./bench kept between candidates (--backendbench_serve): the second candidate's timing goes to
    # the same process as the first's, which started before the first answer.
    timed = subprocess.Popen([args.cli, "reward", "--suite", "smoke", "--device", "cpu", "--build", tree, "--salt", "0x5eed"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment)

    def serving_benches():
        return served_under(timed.pid, b"bench")

    timed_answers = [answer_of(timed, candidates[0])]
    benches_after_first = serving_benches()
    timed_answers.append(answer_of(timed, dict(candidates[0], id="right_again")))
    benches_after_second = serving_benches()
    timed.stdin.close()
    check(timed.wait(timeout=120) == 0, "the timed reward ends at the end of its input")
    for answer in timed_answers:
        check(answer.get("correct") is True and (answer.get("speedup") or 0) > 0 and answer.get("timed_cases", 0) > 0 and
              "speedup_low" in answer, f"a timed reward has a speedup over ATen ({answer.get('id')}: {answer.get('reason', '')})")
    check(len(benches_after_first) == 1 and benches_after_second == benches_after_first,
          f"one served ./bench times every candidate ({benches_after_first}, then {benches_after_second})")
    # A served executable runs its own mode's jobs: a test executable checks, ./bench times.
    for executable, mode, expected in [("bench", "check", "checks; a served ./bench times"),
                                       ("backendbench_test_smoke", "time", "times; a served test executable checks")]:
        root = tempfile.mkdtemp(prefix="backendbench_served_mode_")
        job = {"schema": "backendbench-job", "version": 1, "suite": "smoke", "operator": "relu.default", "backend": "aten",
               "mode": mode}
        request = {"schema": "backendbench-job-request", "version": 1, "job": json.dumps(job),
                   "verdicts": os.path.join(root, "verdicts.jsonl"), "kernel_manifest": os.path.join(root, "manifest.txt"),
                   "log": os.path.join(root, "log.txt")}
        open(request["kernel_manifest"], "w").close()
        server = subprocess.run([os.path.join(tree, executable), "--backendbench_serve=" + root, "--backendbench_device=cpu"],
                                input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=120, env=environment)
        response = json.loads(server.stdout.splitlines()[0]) if server.stdout.strip() else {}
        check(expected in response.get("error", "") and not os.path.exists(request["verdicts"]),
              f"a served {executable} refuses a {mode} job, saying so ({response})")
        shutil.rmtree(root, ignore_errors=True)
    # Spare workers: after a C++ candidate the next check's spare starts libtorch only; after a
    # Python candidate it starts Python and imports torch too, before the next candidate arrives.
    served = subprocess.Popen([args.cli, "reward", "--suite", "smoke", "--device", "cpu", "--no-timing", "--build", tree,
                               "--salt", "0x5eed"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              # Spares replaced at once, as on a machine of 8 cores or more (kernel_workers.h)
                              env=dict(environment, BACKENDBENCH_EARLY_SPARE="on"))

    def answer_to(candidate):
        return answer_of(served, candidate)

    def started_as_spares():
        """The reward's workers started as spares: whether with --python, whether Python is mapped."""
        found = []
        for pid in descendants(served.pid):
            try:
                words = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
                if not words[0].endswith(b"backendbench-worker") or b"--spare" not in words:
                    continue
                maps = open(f"/proc/{pid}/maps").read()
                found.append((b"--python" in words, "libpython" in maps))
            except OSError:
                continue
        return found

    def spares(python_started):
        """The reward's spare workers once one is as asked, within 60 s."""
        found = []
        for _ in range(240):
            found = started_as_spares()
            if any(flag == python_started and mapped == python_started for flag, mapped in found):
                return found
            time.sleep(0.25)
        return found

    python_head = "import torch\n\ndef relu_kernel_impl(x):\n"
    check(answer_to(candidates[0]).get("outcome") == "passed", "a C++ candidate passes in the served reward")
    after_cpp = spares(python_started=False)
    check(after_cpp and not any(flag or mapped for flag, mapped in after_cpp),
          f"after a C++ candidate the spare worker starts no Python ({after_cpp})")
    check(answer_to({"id": "py_right", "op": "relu", "language": "python",
                     "source": python_head + "    return torch.clamp(x, min=0)\n"}).get("outcome") == "passed",
          "a Python candidate passes in the served reward")
    after_python = spares(python_started=True)
    check(any(flag and mapped for flag, mapped in after_python),
          f"after a Python candidate the spare worker has started Python before the next one ({after_python})")
    # Spares replaced at once (as on 8 cores or more) also start the served executables ahead: one
    # per candidate at once (--concurrency, 2 here) and suite when a language's first candidate
    # comes, each with its first spare in that language (--backendbench_first_spare); for Python
    # one more is kept idle whenever none is, so that two serve in turn at concurrency 1.
    served_executables = served_under(served.pid)
    check(len(served_executables) == 4,
          f"two served executables for C++ and two for Python, started ahead ({len(served_executables)})")
    for _ in range(240):
        python_spares = sum(flag and mapped for flag, mapped in started_as_spares())
        if python_spares >= 2:
            break
        time.sleep(0.25)
    check(python_spares >= 2, f"the served executable kept ahead has its first spare start Python ({python_spares})")
    check(answer_to({"id": "py_wrong", "op": "relu", "language": "python",
                     "source": python_head + "    return x.clone()\n"}).get("outcome") == "failed",
          "a wrong Python candidate fails in the spare that started Python")
    # A spare taken is replaced at once (BACKENDBENCH_EARLY_SPARE=on): while a slow candidate is
    # checked in the spare it took, the next candidate's spare starts beside it (three workers
    # started as Python spares: that one, its replacement, and the other served executable's).
    served.stdin.write(json.dumps({"id": "py_slow", "op": "relu", "language": "python",
                                   "source": python_head + "    import time\n    time.sleep(0.5)\n"
                                             "    return torch.clamp(x, min=0)\n"}) + "\n")
    served.stdin.flush()
    during = []
    for _ in range(40):
        during = started_as_spares()
        if sum(flag for flag, _ in during) >= 3:
            break
        time.sleep(0.1)
    line = served.stdout.readline()
    slow = json.loads(line) if line.strip() else {}
    check(sum(flag for flag, _ in during) >= 3,
          f"while a candidate is checked in the spare it took, the next spare is already starting ({during})")
    check(slow.get("outcome") == "passed", f"the slow Python candidate passes ({slow.get('reason', '')})")
    served.stdin.close()
    check(served.wait(timeout=120) == 0, "the served reward ends at the end of its input")
    # At one candidate at a time, Python candidates are served by two executables in turn: the
    # one started ahead, and once it is taken, another started ahead beside it (its spare has two
    # candidates' intervals to start Python).
    alone = subprocess.Popen([args.cli, "reward", "--suite", "smoke", "--device", "cpu", "--no-timing", "--build", tree,
                              "--salt", "0x5eed", "--concurrency", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=dict(environment, BACKENDBENCH_EARLY_SPARE="on"))
    alone_answer = answer_of(alone, {"id": "py_alone", "op": "relu", "language": "python",
                                     "source": python_head + "    return torch.clamp(x, min=0)\n"})
    serving = served_under(alone.pid)
    alone.stdin.close()
    check(alone.wait(timeout=120) == 0 and alone_answer.get("outcome") == "passed",
          f"a Python candidate passes at concurrency 1 ({alone_answer.get('reason', '')})")
    check(len(serving) == 2, f"at concurrency 1, a second served executable is started ahead for Python ({len(serving)})")
    # The Python client: a batch comes back in order, a stream by the caller's ids.
    client = (
        "import json, sys\n"
        "from backendbench.reward import RewardService\n"
        "candidates = json.loads(sys.argv[2])\n"
        "with RewardService(suites='smoke,edge', device='cpu', timing=False, salt='0x5eed', build=sys.argv[3], command=sys.argv[1]) as service:\n"
        "    batch = service.score_batch([{'op': c['op'], 'source': c['source']} for c in candidates])\n"
        "    streamed = {r['id']: r['outcome'] for r in service.stream(candidates)}\n"
        "    one = service.score('relu', candidates[0]['source'])\n"
        "print(json.dumps({'batch': [r['outcome'] for r in batch], 'stream': streamed, 'one': one['outcome']}))\n")
    python = subprocess.run([sys.executable, "-c", client, args.cli, json.dumps(candidates[:3]), tree], capture_output=True,
                            text=True, env=dict(environment, PYTHONPATH=os.path.join(args.source, "python")))
    print(python.stdout[-3000:], python.stderr[-3000:], sep="\n")
    result = json.loads(python.stdout.splitlines()[-1]) if python.returncode == 0 and python.stdout.strip() else {}
    check(result.get("batch") == ["passed", "failed", "build_failed"], "the Python batch: rewards in the candidates' order")
    check(result.get("stream") == {"right": "passed", "wrong": "failed", "broken": "build_failed"},
          "the Python stream: each reward under the caller's id")
    check(result.get("one") == "passed", "the Python client scores one candidate")


{"bad_arguments": bad_arguments, "run": run, "report": report, "workflow": workflow, "gpus": gpus, "slurm": slurm,
 "watch": watch, "reward": reward, "folder_problems": folder_problems, "interrupt": interrupt}[args.step]()
print(f"{len(failures)} failed checks" if failures else "all checks passed")
sys.exit(1 if failures else 0)
