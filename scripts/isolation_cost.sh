#!/usr/bin/env bash
# What the isolation costs (issue 27, item 10), on a CUDA machine with the TorchBench traces: the
# 914 TorchBench cases of the timing targets (relu, _softmax, native_layer_norm, sigmoid, gelu,
# div, tanh, mean; scripts/timing_targets.py) built twice, from a commit before the kernel
# workers (kernels loaded in the process that computes the reference) and from this tree, over
# the same kernels (build_tests/gallery/timing_subset, a kernel for every case), then measured
# in turns, the two builds alternating, each step's wall time and outcome printed:
#   correctness, aten      ctest -L torchbench -R '/aten$'      (no kernel code: the baseline)
#   correctness, kernels   ctest -L torchbench -R '/impl1$'     (kernels: in workers now)
#   served, aten / impl1   the same entries served (scripts/served_ctest.py: kept supervisors, as
#                          `backendbench run` runs them; builds that have backendbench-entry)
#   timing, aten_self      ./bench, the calibration backend     (timing_targets.py's cost)
#   timing, kernels        ./bench, the kernels                 (in workers now, bounded)
# Usage: scripts/isolation_cost.sh build BEFORE_SOURCE TRACES
#        scripts/isolation_cost.sh measure OUTPUT_DIR [ROUNDS] [BUILDS, default "before now"]
# The two phases fit the device machine's 10-minute calls; the builds are build-cost-before and
# build-cost-now in the repository root. ISOLATION_STEPS=correctness measures the correctness steps only.
# ISOLATION_FIXED_SAMPLES=N times every case with exactly N samples in both builds (the 914 cases
# average 44 under the default rule, whose early stop varies by 10 % from run to run): the
# measurements then do the same work, and what differs is the isolation's cost.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
ops=relu,_softmax,native_layer_norm,sigmoid,gelu,div,tanh,mean
kernels="$root/build_tests/gallery/timing_subset"

build_one() {  # build_one <source> <build folder> <traces>
  local prefix
  prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$prefix;${EXTRA_PREFIX:-}" \
        -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_SUITES=torchbench -DBACKENDBENCH_TORCHBENCH_TRACES="$3" \
        -DBACKENDBENCH_OPS=$ops -DBACKENDBENCH_KERNELS_DIR="$kernels" >"$2.configure.log" 2>&1 \
    || { tail -30 "$2.configure.log"; return 1; }
  local started=$SECONDS
  cmake --build "$2" -j "$(nproc)" >"$2.build.log" 2>&1 || { grep -m5 -B2 -A10 'error' "$2.build.log"; return 1; }
  echo "built $2 in $((SECONDS - started)) s"
}

timed() {  # timed <log> <command...>: runs it with its output in <log>, prints its wall seconds
  local log=$1 start end
  shift
  start=$(date +%s.%N)
  "$@" >"$log" 2>&1
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')"
}

case ${1:-} in
  build)
    before=$(realpath "${2:?usage: scripts/isolation_cost.sh build BEFORE_SOURCE TRACES}")
    traces=$(realpath "${3:?usage: scripts/isolation_cost.sh build BEFORE_SOURCE TRACES}")
    build_one "$before" build-cost-before "$traces" &
    b=$!
    build_one . build-cost-now "$traces"
    now_status=$?
    wait $b
    before_status=$?
    exit $((now_status || before_status))
    ;;
  measure)
    out=$(realpath -m "${2:?usage: scripts/isolation_cost.sh measure OUTPUT_DIR [ROUNDS]}")
    rounds=${3:-2}
    builds=${4:-before now}
    mkdir -p "$out"
    export BACKENDBENCH_DEVICE=cuda
    if [[ -n ${ISOLATION_FIXED_SAMPLES:-} ]]; then
      export BACKENDBENCH_BENCH_MAX_SAMPLES=$ISOLATION_FIXED_SAMPLES BACKENDBENCH_BENCH_TARGET_ERROR=1e-9 \
             BACKENDBENCH_BENCH_SECONDS=1000
    fi
    printf '%-6s %-8s %-22s %8s  %s\n' round build step seconds outcome
    for round in $(seq "$rounds"); do
      for which in $builds; do
        dir="$root/build-cost-$which"
        log="$out/$which.$round"
        for entry in aten impl1; do
          s=$(timed "$log.ctest_$entry.log" ctest --test-dir "$dir" -L torchbench -R "/$entry\$" -j 4)
          printf '%-6s %-8s %-22s %8s  %s\n' "$round" "$which" "correctness, $entry" "$s" \
            "$(grep -E 'tests passed' "$log.ctest_$entry.log")"
          # The same entries served, as `backendbench run` runs them (a build that has the client).
          if [[ -x $dir/backendbench-entry ]]; then
            s=$(timed "$log.served_$entry.log" scripts/served_ctest.py --build "$dir" -L torchbench -R "/$entry\$" -j 4 \
                  --log "$log.served_$entry")
            printf '%-6s %-8s %-22s %8s  %s\n' "$round" "$which" "served, $entry" "$s" "$(cat "$log.served_$entry.log")"
          fi
        done
        [[ ${ISOLATION_STEPS:-all} == correctness ]] && continue
        for entry in aten_self impl1; do
          calibration=()
          [[ $entry == aten_self ]] && calibration=(--backendbench_calibration)
          s=$(timed "$log.bench_$entry.log" "$dir/bench" "--benchmark_filter=/$entry/" "${calibration[@]}" \
                --benchmark_format=json "--benchmark_out=$log.bench_$entry.json")
          printf '%-6s %-8s %-22s %8s  %s\n' "$round" "$which" "timing, $entry" "$s" "$(python3 - "$log.bench_$entry.json" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
errors = sum(1 for r in runs if r.get("error_occurred"))
line = f"{len(runs)} benchmarks, {errors} with an error"
# A build that says where each timed case's time went (./bench's checks_ms, measurement_ms, bound_ms).
timed = [r for r in runs if "checks_ms" in r]
if timed:
    def total(name): return sum(r.get(name, 0) for r in timed) / 1e3
    bounded = [r for r in timed if "bound_ms" in r]
    line += (f"; timed cases' checks {total('checks_ms'):.1f} s, measurements {total('measurement_ms'):.1f} s"
             + (f" (of which the supervisor's bound {total('bound_ms'):.1f} s, skipped in "
                f"{sum(1 for r in bounded if r['bound_ms'] == 0)} of {len(bounded)})" if bounded else ""))
print(line)
EOF
)"
        done
      done
    done
    ;;
  *)
    sed -n 2,17p "$0"
    exit 2
    ;;
esac
