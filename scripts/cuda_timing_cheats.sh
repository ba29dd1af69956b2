#!/usr/bin/env bash
# On a CUDA machine: the timing cheats (build_tests/gallery/timing_cheats: a forged GPU timer, a
# deferral, forged answers on the worker's descriptor, a cache of outputs, and the CPU's clock
# patches; and build_tests/gallery/cuda_timing_cheats: a kernel left on the GPU to watch a run's
# inputs appear, an honest twin under BACKENDBENCH_CUDA_RUN_INPUTS=recipe) beside their honest twin, through ./bench on the relu inputs of
# build_tests/tests/fixtures/cuda_timing_cheats, judged by build_tests/tests/timing_cheats.py
# --device cuda: on calls of 100 us or more no cheat gains more than 10 % over its honest twin.
# A .cpp kernel runs on the CPU whatever the run's device, so each gallery file is built here as
# a .cu kernel whose whole text is its host part (#ifndef BACKENDBENCH_DEVICE_PART: compiled as
# C++ against the precompiled header, the device part empty), in build-cuda-timing-cheats-kernels/.
# Usage: scripts/cuda_timing_cheats.sh OUTPUT_DIR [extra cmake arguments]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/cuda_timing_cheats.sh OUTPUT_DIR}")
shift
mkdir -p "$out"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
kernels="$PWD/build-cuda-timing-cheats-kernels"
rm -rf "$kernels" && mkdir -p "$kernels/relu"
for source in build_tests/gallery/timing_cheats/relu/*.cpp; do
  { echo "#ifndef BACKENDBENCH_DEVICE_PART  // $source as a CUDA kernel's host part"; cat "$source"; echo "#endif"; } \
    >"$kernels/relu/$(basename "${source%.cpp}").cu"
done
# And the cheats that exist only on CUDA (a watcher on the GPU), as they are.
cp build_tests/gallery/cuda_timing_cheats/relu/*.cu "$kernels/relu/"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-cuda-timing-cheats "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_SUITES=torchbench \
      -DBACKENDBENCH_TORCHBENCH_TRACES="$PWD/build_tests/tests/fixtures/cuda_timing_cheats" \
      -DBACKENDBENCH_KERNELS_DIR="$kernels" "$@" >"$out/configure.log" 2>&1 &&
  cmake --build build-cuda-timing-cheats -j "$(nproc)" --target bench backendbench_worker >"$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log" "$out/configure.log"; exit 1; }
start=$(date +%s.%N)
python3 build_tests/tests/timing_cheats.py --bench build-cuda-timing-cheats/bench --device cuda --suite torchbench \
        --output "$out/bench.log" >"$out/timing_cheats.log" 2>&1
status=$?
echo "timing_cheats.py --device cuda: exit $status, $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
grep -E '^(ok|FAILED|not bounded|failed otherwise):' "$out/timing_cheats.log"
exit $status
