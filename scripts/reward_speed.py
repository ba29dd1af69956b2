#!/usr/bin/env python3
"""How many candidates a minute the reward API scores (python/backendbench/reward.py driving
`backendbench reward`), and how long each waits: N candidates for relu in a mix that cycles
through a correct kernel, a wrong one and one that does not compile (with --hanging, also one that
never returns, its cases stopped after 5 s), as a training run's samples would, sent as one stream
at a given concurrency.

    scripts/reward_speed.py [--build build] [--language cpp|cuda|python|triton] [--count 12] [--concurrency 2]
                            [--suite smoke,edge] [--device cpu|cuda] [--no-timing] [--every SECONDS] [--hanging]

cuda candidates are two-part kernels (README, "Two-part CUDA kernels"; the example
generated_kernels/relu/relu_implementation_3.cu and a wrong variant of it); python candidates
are torch code (the CPU or CUDA), triton ones a Triton kernel (CUDA). Prints each reward's
outcome and seconds as it arrives, then candidates per minute over the stream (the first
candidate's start of the build folder's slots and served executables included), after the first
answer, and over the second half of the answers (the sustained rate of a long run), how busy the
cores and the GPU were over the stream, and the median and 90th percentile of each part (build,
check, time, total) from the rewards.

--every S sends the candidates S seconds apart instead of all at once, as a model's answers
arrive in a training run: the harness's time between checks (a spare worker's start of libtorch,
and of Python for python and triton candidates) then overlaps the wait for the next answer.
"""
import argparse
import os
import statistics
import sys
import time

source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(source, "python"))
from backendbench.reward import RewardService  # noqa: E402  (the checkout's package, stdlib only)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine_busy import MachineBusy  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--build", default=os.path.join(source, "build"))
parser.add_argument("--language", choices=["cpp", "cuda", "python", "triton"], default="cpp")
parser.add_argument("--count", type=int, default=12)
parser.add_argument("--concurrency", type=int, default=2)
parser.add_argument("--suite", default="smoke,edge")
parser.add_argument("--device", default=None)
parser.add_argument("--no-timing", action="store_true")
parser.add_argument("--every", type=float, default=0.0, help="seconds between candidates (default: all at once)")
parser.add_argument("--hanging", action="store_true",
                    help="a fourth kernel in the mix that never returns (each case stopped after 5 s: BACKENDBENCH_CASE_TIMEOUT)")
args = parser.parse_args()

if args.language == "cpp":
    head = "#include <ATen/ATen.h>\nat::Tensor relu_kernel_impl(const at::Tensor& self) {"
    mix = [("correct", head + " return self.clamp_min(0); }\n"),
           ("wrong", head + " return self.clone(); }\n"),
           ("broken", head + " return self.clamp_min(0) }\n")]
elif args.language == "python":
    head = "import torch\n\ndef relu_kernel_impl(x):\n"
    mix = [("correct", head + "    return torch.clamp(x, min=0)\n"),
           ("wrong", head + "    return x.clone()\n"),
           ("broken", head + "    return torch.clamp(x, min=0\n")]
elif args.language == "triton":
    correct = """import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x < 0, 0, x), mask=mask)


def relu_kernel_impl(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        _relu[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
"""
    mix = [("correct", correct), ("wrong", correct.replace("tl.where(x < 0, 0, x)", "x")),
           ("broken", correct.replace("def relu_kernel_impl(x):", "def relu_kernel_impl(x)"))]
else:
    correct = open(os.path.join(source, "generated_kernels", "relu", "relu_implementation_3.cu")).read()
    wrong = correct.replace("return x < T(0) ? T(0) : x;", "return x;")  # float and double left as they are
    if wrong == correct:
        raise SystemExit("could not make a wrong variant of relu_implementation_3.cu")
    mix = [("correct", correct), ("wrong", wrong), ("broken", correct.replace("{", "{ syntax error here", 1))]

if args.hanging:
    # Correct but for a wait that never ends, at the start of the kernel's host function.
    if args.language == "cpp":
        hanging = mix[0][1].replace("#include <ATen/ATen.h>", "#include <ATen/ATen.h>\n#include <chrono>\n#include <thread>")
        hanging = hanging.replace(") {", ") { for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));", 1)
    elif args.language == "cuda":
        hanging = mix[0][1].replace("#include <cstdint>", "#include <chrono>\n#include <cstdint>\n#include <thread>", 1)
        hanging = hanging.replace("at::Tensor relu_kernel_impl(const at::Tensor& self) {",
                                  "at::Tensor relu_kernel_impl(const at::Tensor& self) {\n"
                                  "  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));")
    else:
        hanging = mix[0][1].replace("def relu_kernel_impl(x):\n",
                                    "def relu_kernel_impl(x):\n    import time\n    while True:\n        time.sleep(1)\n")
    if hanging == mix[0][1]:
        raise SystemExit("could not make a hanging variant of the correct kernel")
    mix.append(("hanging", hanging))
    os.environ["BACKENDBENCH_CASE_TIMEOUT"] = "5"

language = "python" if args.language == "triton" else args.language
candidates = [{"id": f"{mix[i % len(mix)][0]}-{i}", "op": "relu", "language": language, "source": mix[i % len(mix)][1]}
              for i in range(args.count)]
rewards = []
busy = MachineBusy().start()
start = time.time()
arrived = []
with RewardService(suites=args.suite, device=args.device, concurrency=args.concurrency, build=args.build,
                   command=os.path.join(args.build, "backendbench"), timing=False if args.no_timing else None) as service:
    print(f"service log: {service.log_path}", flush=True)
    def arriving():
        for i, candidate in enumerate(candidates):
            time.sleep(max(0.0, start + i * args.every - time.time()))
            yield candidate

    for reward in service.stream(arriving()):
        rewards.append(reward)
        arrived.append(time.time())
        print(f"  {reward['id']:>12}  {reward['outcome']:<12} {reward['seconds']['total']:6.2f} s"
              f"  speedup {reward['speedup'] if reward['speedup'] is not None else '-'}  {reward['reason'][:80]}", flush=True)
cores_busy, gpu_busy = busy.stop()
# A Python candidate has no build: one that does not parse fails its cases.
expected = {"correct": "passed", "wrong": "failed", "broken": "failed" if language == "python" else "build_failed",
            "hanging": "failed"}
mismatched = [r["id"] for r in rewards if r["outcome"] != expected[r["id"].split("-")[0]]]
# From the start: the build folder's check, the slots' and served executables' start included; after
# the first answer: the stream's steady rate.
whole = arrived[-1] - start
steady = (len(arrived) - 1) / (arrived[-1] - arrived[0]) * 60 if len(arrived) > 1 and arrived[-1] > arrived[0] else float("nan")
# Sustained: over the second half of the answers, once every served executable has started.
half = len(arrived) // 2
sustained = (len(arrived) - 1 - half) / (arrived[-1] - arrived[half]) * 60 if len(arrived) > 3 and arrived[-1] > arrived[half] else float("nan")
print(f"\n{len(rewards)} candidates ({args.language}, concurrency {args.concurrency}): {whole:.1f} s from the start, "
      f"{60 * len(rewards) / whole:.1f} a minute; after the first answer {steady:.1f} a minute; over the second half "
      f"{sustained:.1f} a minute; outcomes as expected: "
      f"{len(rewards) - len(mismatched)} of {len(rewards)}" + (f" (not: {', '.join(mismatched)})" if mismatched else ""))
print(f"  cores busy {cores_busy:.0f} %, GPU busy {'-' if gpu_busy is None else f'{gpu_busy:.0f} %'} (over the whole stream)")
for part in ["build", "check", "time", "total"]:
    # A timing's own median: over the candidates that were timed (the others' time is 0).
    values = sorted(r["seconds"][part] for r in rewards if part != "time" or r.get("timed_cases", 0) > 0)
    if values:
        p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
        print(f"  {part:<6} median {statistics.median(values):6.2f} s   p90 {p90:6.2f} s")
sys.exit(1 if mismatched else 0)
