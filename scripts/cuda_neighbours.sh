#!/usr/bin/env bash
# On a CUDA machine: a correct kernel beside neighbours that attack it through the GPU
# (build_tests/gallery/cuda_neighbours: its memory taken at load or by a thread, a kernel left
# spinning on the GPU), through ./bench on the relu inputs of
# build_tests/tests/fixtures/cuda_timing_cheats, judged by build_tests/tests/cuda_neighbours.py:
# the honest kernel's verdicts and figures beside them are those it gets alone.
# Usage: scripts/cuda_neighbours.sh OUTPUT_DIR [extra cmake arguments]
# BACKENDBENCH_NEIGHBOURS_BUILD names the build folder (default build-cuda-neighbours; another
# script's, such as build-cuda-timing-cheats, is configured again and only the kernels rebuilt).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/cuda_neighbours.sh OUTPUT_DIR}")
shift
mkdir -p "$out"
build="${BACKENDBENCH_NEIGHBOURS_BUILD:-build-cuda-neighbours}"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] && generator=()  # a folder configured before keeps its generator
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_SUITES=torchbench \
      -DBACKENDBENCH_TORCHBENCH_TRACES="$PWD/build_tests/tests/fixtures/cuda_timing_cheats" \
      -DBACKENDBENCH_KERNELS_DIR="$PWD/build_tests/gallery/cuda_neighbours" "$@" >"$out/configure.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target bench backendbench_worker >"$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log" "$out/configure.log"; exit 1; }
start=$(date +%s.%N)
python3 build_tests/tests/cuda_neighbours.py --bench "$build/bench" --suite torchbench --logs "$out" >"$out/cuda_neighbours.log" 2>&1
status=$?
echo "cuda_neighbours.py: exit $status, $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
grep -E '^(ok|FAILED|neighbour|said):' "$out/cuda_neighbours.log"
exit $status
