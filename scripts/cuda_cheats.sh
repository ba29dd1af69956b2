#!/usr/bin/env bash
# On a CUDA machine: the tests and ./bench against kernels that cheat in the ways ./bench alone
# used to miss (build_tests/gallery/cuda_cheats: a side-stream relu, an at::relu fallback, a
# caching sigmoid, a relu that keeps its input in a persisting L2 set-aside beside its honest
# twin, a relu that leaves the GPU busy after it returns; on the inputs of
# build_tests/tests/fixtures/persisting_l2), and the project's own tests on CUDA (the aten
# backend, the example kernels and the gallery), to show there are no false alarms.
# Usage: scripts/cuda_cheats.sh OUTPUT_DIR [extra cmake arguments, e.g. -DCMAKE_INCLUDE_PATH=...]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/cuda_cheats.sh OUTPUT_DIR}")
shift
mkdir -p "$out"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
configure() {  # configure <build dir> <cmake arguments...>
  local dir=$1
  shift
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
        -DBACKENDBENCH_SUITES="smoke;edge;sample" "$@" >"$out/configure_$(basename "$dir").log" 2>&1 &&
    cmake --build "$dir" -j "$(nproc)" >"$out/build_$(basename "$dir").log" 2>&1 ||
    { tail -40 "$out/build_$(basename "$dir").log"; return 1; }
}
configure build-cuda-tests -DBACKENDBENCH_BUILD_TESTS=ON "$@" || exit 1
configure build-cuda-cheats -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_SUITES="smoke;edge;sample;torchbench" \
          -DBACKENDBENCH_TORCHBENCH_TRACES="$PWD/build_tests/tests/fixtures/persisting_l2" \
          -DBACKENDBENCH_KERNELS_DIR="$PWD/build_tests/gallery/cuda_cheats" "$@" || exit 1
(cd build-cuda-cheats && ctest -j 4 --output-on-failure >"$out/ctest_cheats.log" 2>&1)
echo "cheat kernels in the tests:"
grep -E 'Test +#' "$out/ctest_cheats.log" | grep -v '/aten '
(cd build-cuda-cheats && ./bench --benchmark_filter='^(smoke|edge|torchbench)/(relu|sigmoid)' \
   --backendbench_summary="$out/bench_cheats_summary.json" >"$out/bench_cheats.log" 2>"$out/bench_cheats.err")
echo "./bench on the cheat kernels (exit $?):"
sed -n '/^speedup over aten/,$p' "$out/bench_cheats.err"
(cd build-cuda-tests && ./bench --benchmark_filter='^(smoke|edge|sample)/' \
   --backendbench_summary="$out/bench_examples_summary.json" >"$out/bench_examples.log" 2>"$out/bench_examples.err")
echo "./bench on the example kernels (exit $?):"
sed -n '/^speedup over aten/,$p' "$out/bench_examples.err"
# Last, as the longest: the project's own tests, each of which picks CUDA where it can.
(cd build-cuda-tests && ctest -j 8 --output-on-failure >"$out/ctest_project.log" 2>&1)
echo "project tests on CUDA: $(grep -E 'tests passed' "$out/ctest_project.log")"
grep -E '\*\*\*Failed|\*\*\*Timeout|Not Run' "$out/ctest_project.log" | head -40
