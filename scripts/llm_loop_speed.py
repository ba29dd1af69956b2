#!/usr/bin/env python3
"""How fast the llm backends' loop turns an answer into a verdict, and how many candidates per
minute it gets through at several concurrencies, with the model taken out of the figure: a
scripted server on loopback (build_tests/tests/model_server.py) answers at once with correct C++
kernels, so every second measured is the harness's (write, generate the binding, compile, link,
run the suites' test executables on the feedback cases, read the verdicts).

    scripts/llm_loop_speed.py [--build build] [--concurrency 1,2,4] [--rounds 3] [--workers 1]

Prints, per concurrency: candidates, wall seconds of the generation phase, candidates per minute,
and the median and 90th percentile of answer-to-verdict, build and check seconds (from each
attempt's attempt.json), for the smoke and edge suites on relu, add.Tensor, mul.Tensor and neg.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--build", default=os.path.join(source, "build"))
parser.add_argument("--cli", default="", help="default: <build>/backendbench")
parser.add_argument("--concurrency", default="1,2,4")
parser.add_argument("--rounds", default="3")
parser.add_argument("--workers", default="1")
args = parser.parse_args()
cli = args.cli or os.path.join(args.build, "backendbench")


def answer(folder, signature, body):
    code = "#include <ATen/ATen.h>\n\nat::Tensor " + folder + "_kernel_impl(" + signature + ") {\n  " + body + "\n}\n"
    return [{"text": "```cpp\n" + code + "```\n"}]


script = {
    "relu.default": answer("relu__default", "const at::Tensor& self", "return at::clamp_min(self, 0);"),
    "add.Tensor": answer("add__Tensor", "const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha",
                         "return at::sub(self, other, -alpha);"),
    "mul.Tensor": answer("mul__Tensor", "const at::Tensor& self, const at::Tensor& other", "return at::div(self, at::reciprocal(other));"),
    "neg.default": answer("neg__default", "const at::Tensor& self", "return at::sub(at::zeros_like(self), self);"),
}


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))] if ordered else float("nan")


work = tempfile.mkdtemp(prefix="backendbench_llm_speed_")
with open(os.path.join(work, "script.json"), "w") as f:
    json.dump(script, f)
port_file = os.path.join(work, "port")
server = subprocess.Popen([sys.executable, os.path.join(source, "build_tests", "tests", "model_server.py"), "--script",
                           os.path.join(work, "script.json"), "--port-file", port_file, "--log", os.path.join(work, "requests.jsonl")])
try:
    while not os.path.exists(port_file):
        time.sleep(0.05)
    environment = dict(os.environ, ANTHROPIC_BASE_URL="http://127.0.0.1:" + open(port_file).read().strip(), ANTHROPIC_API_KEY="unused")
    print(f"{'concurrency':>11} {'candidates':>10} {'wall s':>7} {'per min':>8} {'verdict med':>11} {'p90':>6} "
          f"{'build med':>9} {'check med':>9}")
    for concurrency in args.concurrency.split(","):
        out = os.path.join(work, "results_" + concurrency)
        done = subprocess.run([cli, "run", "--suite", "smoke,edge", "--backend", "llm", "--ops", "relu,add.Tensor,mul.Tensor,neg",
                               "--device", "cpu", "--no-timing", "--select", "best", "--rounds", args.rounds, "--workers", args.workers,
                               "--concurrency", concurrency, "--build", args.build, "--out", out, "-j", "2"],
                              env=environment, capture_output=True, text=True)
        if not os.path.exists(os.path.join(out, "generation.json")):
            print(done.stdout[-3000:], done.stderr[-3000:])
            sys.exit(f"the run at concurrency {concurrency} wrote no generation.json (exit {done.returncode})")
        generation = json.load(open(os.path.join(out, "generation.json")))
        attempts = [a for op in generation["operators"] for a in op["attempts"] if a["outcome"] in ("passed", "failed", "build_failed")]
        verdict = [a["answer_to_verdict_seconds"] for a in attempts]
        build = [a["build_seconds"] for a in attempts]
        check = [a["check_seconds"] for a in attempts]
        print(f"{concurrency:>11} {len(attempts):>10} {generation['seconds']:>7.1f} {60 * len(attempts) / generation['seconds']:>8.1f} "
              f"{statistics.median(verdict):>11.2f} {percentile(verdict, 0.9):>6.2f} {statistics.median(build):>9.2f} "
              f"{statistics.median(check):>9.2f}")
        failed = [a["key"] for a in attempts if a["outcome"] != "passed"]
        if failed:
            print("  not passed (the figures include them):", ", ".join(failed))
finally:
    server.terminate()
    server.wait()
