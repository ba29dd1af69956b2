#!/usr/bin/env bash
# On a CUDA machine: the example CUDA kernels (generated_kernels/*/*.cu) on every TorchBench input
# of their operators — the tests first (every case, every check), then ./bench against aten — and
# a summary per operator: cases, geomean and lowest speedup, and the cases under 0.9× of aten.
# Usage: scripts/cuda_example_speed.sh OUTPUT_DIR TRACES_DIR [extra cmake arguments]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/cuda_example_speed.sh OUTPUT_DIR TRACES_DIR}")
traces=$(realpath "${2:?usage: scripts/cuda_example_speed.sh OUTPUT_DIR TRACES_DIR}")
shift 2
mkdir -p "$out"
# Each .cu kernel as (operator overload, implN): relu_implementation_2.cu -> relu.default, impl2
# (the CPU kernels are left out: they are not what this measures, and slow on 1,242 add inputs).
read -r op_list bench_filter test_filter < <(python3 - generated_kernels/*/*.cu <<'PY'
import os, re, sys, torch
ops, benchmarks, tests = [], [], []
for path in sys.argv[1:]:
    op, number = re.fullmatch(r"(\w+)_implementation_(\d+)\.cu", os.path.basename(path)).groups()
    overloads = getattr(torch.ops.aten, op).overloads()
    name = f"{op}.{'Tensor' if 'Tensor' in overloads else 'default'}"
    ops.append(name)
    benchmarks.append(f"{re.escape(name)}/.*/impl{number}/")
    tests.append(f"{op}[._][^/]*/impl{number}")  # its in-place and out= siblings too
print(";".join(sorted(set(ops))), "^torchbench/(" + "|".join(benchmarks) + ")", "/(" + "|".join(tests) + ")$")
PY
)
echo "operators: $op_list; tests: $test_filter; benchmarks: $bench_filter"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
dir=build-cuda-speed
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_SUITES="smoke;edge;torchbench" \
      -DBACKENDBENCH_TORCHBENCH_TRACES="$traces" -DBACKENDBENCH_OPS="$op_list" "$@" >"$out/configure.log" 2>&1 &&
  cmake --build "$dir" -j "$(nproc)" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
(cd "$dir" && ctest -j 8 --output-on-failure -R "$test_filter" >"$out/ctest.log" 2>&1)
echo "tests: $(grep -E 'tests passed' "$out/ctest.log")"
grep -E 'Test +#.*(Failed|Exception|Timeout)' "$out/ctest.log"
(cd "$dir" && ./bench --benchmark_filter="$bench_filter" \
   --backendbench_summary="$out/bench_summary.json" >"$out/bench.log" 2>"$out/bench.err")
echo "./bench exit $?"
sed -n '/^speedup over aten/,$p' "$out/bench.err"
python3 - "$out/bench_summary.json" <<'PY'
import json, math, sys
cases = [c for c in json.load(open(sys.argv[1]))["cases"] if c["status"] != "skipped"]
for (op, backend) in sorted({(c["operator"], c["backend"]) for c in cases}):
    rows = [c for c in cases if (c["operator"], c["backend"]) == (op, backend)]
    timed = [c for c in rows if (c.get("timing") or {}).get("speedup")]
    speedups = sorted(c["timing"]["speedup"] for c in timed)
    slow = sorted((c for c in timed if c["timing"]["speedup"] < 0.9), key=lambda c: c["timing"]["speedup"])
    geomean = math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else float("nan")
    print(f"{op} {backend}: {len(rows)} cases, {len(timed)} timed, {len(rows) - len(timed)} not timed; "
          f"geomean {geomean:.3f}x, lowest {speedups[0] if speedups else float('nan'):.3f}x, "
          f"{len(slow)} under 0.9x")
    for c in slow[:25]:
        t = c["timing"]
        print(f"  {t['speedup']:.3f}x  {t['kernel_us']:.2f} vs {t['reference_us']:.2f} us  {c['arguments'][:110]}")
    for c in [c for c in rows if c not in timed][:10]:
        print(f"  not timed ({c['status']}, {c['flags']}): {c['arguments'][:110]}")
PY
