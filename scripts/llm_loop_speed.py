#!/usr/bin/env python3
"""How fast the llm backends' loop turns an answer into a verdict, and how many candidates per
minute it gets through at several concurrencies, with the model taken out of the figure: a
scripted server on loopback (build_tests/tests/model_server.py) answers at once with correct C++
kernels, so every second measured is the harness's (write, generate the binding, compile, link,
run the suites' test executables on the feedback cases, read the verdicts).

    scripts/llm_loop_speed.py [--build build] [--concurrency 1,2,4] [--rounds 3] [--workers 1]
                              [--language cpp|cuda|cuda-classic] [--cuda-ops 1-4] [--mix] [--one-shot]

Prints, per concurrency: candidates, wall seconds of the generation phase, candidates per minute,
and the median and 90th percentile of answer-to-verdict, build and check seconds (from each
attempt's attempt.json), for the smoke and edge suites on relu, add.Tensor, mul.Tensor and neg
(C++, on the CPU), or with CUDA candidates on a GPU on relu (--cuda-ops n: and neg, abs, sigmoid,
n operators, one chain each): `cuda` answers with a
two-part kernel (README, "Two-part CUDA kernels"), `cuda-classic` with one whose every line nvcc
compiles with ATen's headers. With --mix (C++), the answers of each operator cycle through a
correct kernel, a wrong one, one that does not compile and one that hangs (its case times out
after BACKENDBENCH_CASE_TIMEOUT, 5 s here), as a training run's samples would.

With --one-shot, each built candidate is checked a second time afterwards, each suite's test
executable started for it alone (how checks ran before they were served, job_server.h), to compare
the two checks on the same machine and build: that check's median, and how many of its verdicts'
statuses agree with the served check's.

Also printed: how busy the machine's cores were over each run (from /proc/stat) and its GPU
(nvidia-smi sampled every 200 ms; "-" without one), and the candidates' outcomes.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine_busy import MachineBusy  # noqa: E402

source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--build", default=os.path.join(source, "build"))
parser.add_argument("--cli", default="", help="default: <build>/backendbench")
parser.add_argument("--concurrency", default="1,2,4")
parser.add_argument("--rounds", default="3")
parser.add_argument("--workers", default="1")
parser.add_argument("--language", default="cpp", choices=["cpp", "cuda", "cuda-classic"])
parser.add_argument("--mix", action="store_true", help="correct, wrong, not compiling and hanging candidates in turn (C++)")
parser.add_argument("--cuda-ops", type=int, default=1, choices=[1, 2, 3, 4],
                    help="--language cuda: how many operators (relu, neg, abs, sigmoid), one chain each")
parser.add_argument("--one-shot", action="store_true",
                    help="also check every built candidate again the way checks ran before the served executables: "
                         "each suite's test executable started for it, both at once; prints that check's median and "
                         "whether its verdicts agree")
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


# A model's unary kernel in two parts: the device part sees CUDA's headers only; float32 on the
# GPU, other dtypes through other ATen operators (calling its own is the fallback the checks fail).
def two_part_unary(folder, device_expression, other_dtypes):
    return ("""#include <cstdint>
#ifdef BACKENDBENCH_DEVICE_PART
#include <cuda_runtime.h>
__global__ void unary_f32(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = DEVICE_EXPRESSION;
}
cudaError_t launch_unary_f32(const float* x, float* y, int64_t n, cudaStream_t stream) {
  unary_f32<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
#else
#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
cudaError_t launch_unary_f32(const float* x, float* y, int64_t n, cudaStream_t stream);
at::Tensor FOLDER_kernel_impl(const at::Tensor& self) {
  if (self.scalar_type() != at::kFloat) return OTHER_DTYPES;
  const at::Tensor x = self.contiguous();
  at::Tensor y = at::empty_like(x);
  if (x.numel() > 0) C10_CUDA_CHECK(launch_unary_f32(x.const_data_ptr<float>(), y.mutable_data_ptr<float>(), x.numel(), c10::cuda::getCurrentCUDAStream()));
  return y;
}
#endif
""").replace("DEVICE_EXPRESSION", device_expression).replace("FOLDER", folder).replace("OTHER_DTYPES", other_dtypes)


TWO_PART_RELU = two_part_unary("relu__default", "x[i] < 0.f ? 0.f : x[i]", "at::clamp_min(self, 0)")
# With --ops-cuda several: one chain each, so --concurrency runs them at once.
TWO_PART_MORE = {
    "neg.default": two_part_unary("neg__default", "-x[i]", "at::mul(self, -1)"),
    "abs.default": two_part_unary("abs__default", "fabsf(x[i])", "at::where(self < 0, at::mul(self, -1), self)"),
    "sigmoid.default": two_part_unary("sigmoid__default", "1.f / (1.f + expf(-x[i]))", "at::reciprocal(at::exp(at::mul(self, -1)) + 1)"),
}
# The same kernel as one .cu that nvcc compiles whole, ATen's headers included.
CLASSIC_RELU = """#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void relu_f32(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] < 0.f ? 0.f : x[i];
}
at::Tensor relu__default_kernel_impl(const at::Tensor& self) {
  if (self.scalar_type() != at::kFloat) return at::clamp_min(self, 0);
  const at::Tensor x = self.contiguous();
  at::Tensor y = at::empty_like(x);
  const int64_t n = x.numel();
  if (n > 0) relu_f32<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.const_data_ptr<float>(), y.mutable_data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""
if args.language != "cpp":
    script = {"relu.default": [{"text": "```cuda\n" + (TWO_PART_RELU if args.language == "cuda" else CLASSIC_RELU) + "```\n"}]}
    if args.cuda_ops > 1:
        if args.language != "cuda":
            sys.exit("--cuda-ops: two-part CUDA candidates only (--language cuda)")
        for op, code in list(TWO_PART_MORE.items())[:args.cuda_ops - 1]:
            script[op] = [{"text": "```cuda\n" + code + "```\n"}]


if args.mix:
    if args.language != "cpp":
        sys.exit("--mix: C++ candidates only (--language cpp)")
    # The correct answer is the one above (which calls other operators than its own: calling its
    # own is the fallback the checks fail).
    signatures = {"relu.default": ("relu__default", "const at::Tensor& self"),
                  "add.Tensor": ("add__Tensor", "const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha"),
                  "mul.Tensor": ("mul__Tensor", "const at::Tensor& self, const at::Tensor& other"),
                  "neg.default": ("neg__default", "const at::Tensor& self")}
    wrong_bodies = ["return self.clone();", "return self +;", "volatile bool spin = true;\n  while (spin) {}\n  return self;"]
    script = {op: script[op] + [answer(folder, signature, body)[0] for body in wrong_bodies]
              for op, (folder, signature) in signatures.items()}


def one_shot_check(attempt_folder):
    """(seconds, statuses agreeing, statuses compared): the candidate's check again, each suite's
    test executable started for it, the suites at once, as checks ran before they were served."""
    suites = [f[:-len(".job.jsonl")] for f in os.listdir(attempt_folder) if f.endswith(".job.jsonl")]
    # The manifest names the run's folder as it was while it ran (<out>.partial-<pid>).
    manifest = os.path.join(attempt_folder, "manifest.one_shot.txt")
    with open(manifest, "w") as handle:
        handle.write(re.sub(r"\.partial-[0-9]+/", "/", open(os.path.join(attempt_folder, "manifest.txt")).read()))
    start = time.time()
    runs = []
    for suite in suites:
        runs.append(subprocess.Popen([os.path.join(args.build, "backendbench_test_" + suite),
                                      "--backendbench_job=" + os.path.join(attempt_folder, suite + ".job.jsonl"),
                                      "--backendbench_verdicts=" + os.path.join(attempt_folder, suite + ".one_shot.jsonl"),
                                      "--backendbench_kernel_manifest=" + manifest],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment))
    for run in runs:
        run.wait()
    seconds = time.time() - start
    agree = compared = 0
    for suite in suites:
        def statuses(name):
            path = os.path.join(attempt_folder, name)
            return {v["case"]: v["status"] for v in map(json.loads, open(path))} if os.path.exists(path) else {}
        served, again = statuses(suite + ".verdicts.jsonl"), statuses(suite + ".one_shot.jsonl")
        for key in served:
            compared += 1
            agree += served[key] == again.get(key)
    return seconds, agree, compared


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
    if args.mix:
        environment["BACKENDBENCH_CASE_TIMEOUT"] = "5"
    print(f"{'concurrency':>11} {'candidates':>10} {'wall s':>7} {'per min':>8} {'verdict med':>11} {'p90':>6} "
          f"{'build med':>9} {'check med':>9} {'cores busy':>10} {'GPU busy':>8}")
    for concurrency in args.concurrency.split(","):
        out = os.path.join(work, "results_" + concurrency)
        ops, device = ("relu,add.Tensor,mul.Tensor,neg", "cpu") if args.language == "cpp" else (",".join(script), "cuda")
        language = ["--language", "cuda"] if args.language != "cpp" else []
        busy = MachineBusy().start()
        done = subprocess.run([cli, "run", "--suite", "smoke,edge", "--backend", "llm", "--ops", ops, *language,
                               "--device", device, "--no-timing", "--select", "best", "--rounds", args.rounds, "--workers", args.workers,
                               "--concurrency", concurrency, "--build", args.build, "--out", out, "-j", "2"],
                              env=environment, capture_output=True, text=True)
        cores_busy, gpu_busy = busy.stop()
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
              f"{statistics.median(check):>9.2f} {cores_busy:>9.0f}% {'-' if gpu_busy is None else f'{gpu_busy:.0f}%':>8}")
        outcomes = {}
        for a in attempts:
            outcomes[a["outcome"]] = outcomes.get(a["outcome"], 0) + 1
        print("  outcomes:", ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())),
              "(cores and GPU busy over the whole run: the generation and the final scoring)")
        if args.one_shot:
            checked = [os.path.join(out, "attempts", a["key"]) for op in generation["operators"]
                       for a in op["attempts"] if a["outcome"] in ("passed", "failed")]
            again = [one_shot_check(folder) for folder in checked]
            if again:
                print(f"  one-shot check (each suite's executable started for the candidate): median "
                      f"{statistics.median(a[0] for a in again):.2f} s over {len(again)} candidates, served check median "
                      f"{statistics.median(check):.2f} s; verdict statuses agree on {sum(a[1] for a in again)} of "
                      f"{sum(a[2] for a in again)} cases")
finally:
    server.terminate()
    server.wait()
