#!/usr/bin/env python3
"""How many candidates a minute the reward API scores (python/backendbench/reward.py driving
`backendbench reward`), and how long each waits: N candidates for relu in a mix that cycles
through a correct kernel, a wrong one and one that does not compile (as a training run's samples
would), sent as one stream at a given concurrency.

    scripts/reward_speed.py [--build build] [--language cpp|cuda] [--count 12] [--concurrency 2]
                            [--suite smoke,edge] [--device cpu|cuda] [--no-timing]

cuda candidates are two-part kernels (README, "Two-part CUDA kernels"; the example
generated_kernels/relu/relu_implementation_3.cu and a wrong variant of it). Prints each reward's
outcome and seconds as it arrives, then candidates per minute over the stream (the first
candidate's start of the build folder's slots and served executables included), and the median
and 90th percentile of each part (build, check, time, total) from the rewards.
"""
import argparse
import os
import statistics
import sys
import time

source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(source, "python"))
from backendbench.reward import RewardService  # noqa: E402  (the checkout's package, stdlib only)

parser = argparse.ArgumentParser()
parser.add_argument("--build", default=os.path.join(source, "build"))
parser.add_argument("--language", choices=["cpp", "cuda"], default="cpp")
parser.add_argument("--count", type=int, default=12)
parser.add_argument("--concurrency", type=int, default=2)
parser.add_argument("--suite", default="smoke,edge")
parser.add_argument("--device", default=None)
parser.add_argument("--no-timing", action="store_true")
args = parser.parse_args()

if args.language == "cpp":
    head = "#include <ATen/ATen.h>\nat::Tensor relu_kernel_impl(const at::Tensor& self) {"
    mix = [("correct", head + " return self.clamp_min(0); }\n"),
           ("wrong", head + " return self.clone(); }\n"),
           ("broken", head + " return self.clamp_min(0) }\n")]
else:
    correct = open(os.path.join(source, "generated_kernels", "relu", "relu_implementation_3.cu")).read()
    wrong = correct.replace("return x < T(0) ? T(0) : x;", "return x;")  # float and double left as they are
    if wrong == correct:
        raise SystemExit("could not make a wrong variant of relu_implementation_3.cu")
    mix = [("correct", correct), ("wrong", wrong), ("broken", correct.replace("{", "{ syntax error here", 1))]

candidates = [{"id": f"{mix[i % len(mix)][0]}-{i}", "op": "relu", "language": args.language, "source": mix[i % len(mix)][1]}
              for i in range(args.count)]
rewards = []
start = time.time()
arrived = []
with RewardService(suites=args.suite, device=args.device, concurrency=args.concurrency, build=args.build,
                   command=os.path.join(args.build, "backendbench"), timing=False if args.no_timing else None) as service:
    print(f"service log: {service.log_path}", flush=True)
    for reward in service.stream(candidates):
        rewards.append(reward)
        arrived.append(time.time())
        print(f"  {reward['id']:>12}  {reward['outcome']:<12} {reward['seconds']['total']:6.2f} s"
              f"  speedup {reward['speedup'] if reward['speedup'] is not None else '-'}  {reward['reason'][:80]}", flush=True)
expected = {"correct": "passed", "wrong": "failed", "broken": "build_failed"}
mismatched = [r["id"] for r in rewards if r["outcome"] != expected[r["id"].split("-")[0]]]
# From the start: the build folder's check, the slots' and served executables' start included; after
# the first answer: the stream's steady rate.
whole = arrived[-1] - start
steady = (len(arrived) - 1) / (arrived[-1] - arrived[0]) * 60 if len(arrived) > 1 and arrived[-1] > arrived[0] else float("nan")
print(f"\n{len(rewards)} candidates ({args.language}, concurrency {args.concurrency}): {whole:.1f} s from the start, "
      f"{60 * len(rewards) / whole:.1f} a minute; after the first answer {steady:.1f} a minute; outcomes as expected: "
      f"{len(rewards) - len(mismatched)} of {len(rewards)}" + (f" (not: {', '.join(mismatched)})" if mismatched else ""))
for part in ["build", "check", "time", "total"]:
    values = sorted(r["seconds"][part] for r in rewards)
    if values:
        p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
        print(f"  {part:<6} median {statistics.median(values):6.2f} s   p90 {p90:6.2f} s")
sys.exit(1 if mismatched else 0)
