#!/usr/bin/env bash
# On a CUDA machine: the kernel workers' sandbox with the GPU, and the CUDA attack of the security
# gallery (build_tests/gallery/security_cuda: uninitialised memory hoping for the reference's
# freed block). Builds the smoke and edge suites over the example kernels plus that kernel (as
# relu impl9), runs them on CUDA sandboxed and unsandboxed, and prints each entry's outcome and
# the wall time of each mode; then relu's two-part CUDA kernel and the attack through a served
# executable (build_tests/tests/served_jobs.py).
# Usage: scripts/security_gpu.sh OUTPUT_DIR [extra cmake arguments]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/security_gpu.sh OUTPUT_DIR}")
shift
mkdir -p "$out"
kernels=$(mktemp -d)/kernels
cp -r generated_kernels "$kernels"
cp build_tests/gallery/security_cuda/relu/relu_implementation_1.cu "$kernels/relu/relu_implementation_9.cu"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-security-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_SUITES="smoke;edge" -DBACKENDBENCH_KERNELS_DIR="$kernels" "$@" \
      >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-security-gpu -j "$(nproc)" --target backendbench_worker backendbench_test_smoke backendbench_test_edge \
      >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
cd build-security-gpu
for mode in bwrap none; do
  start=$(date +%s.%N)
  BACKENDBENCH_SANDBOX=$mode BACKENDBENCH_DEVICE=cuda ctest -j 4 --output-on-failure >"$out/ctest_$mode.log" 2>&1
  end=$(date +%s.%N)
  echo "sandbox $mode: $(grep -E 'tests passed' "$out/ctest_$mode.log"); wall $(python3 -c "print(round($end-$start,1))") s"
  grep -E 'Test +#' "$out/ctest_$mode.log" | sed 's/^ */  /'
done
# The same kernels served, as the llm backends check candidates: each loads into a spare GPU worker.
echo "served (smoke, CUDA):"
python3 ../build_tests/tests/served_jobs.py --executable ./backendbench_test_smoke --device cuda --suite smoke \
        --manifest generated/kernel_manifests/default.txt --operator relu.default --expect impl3=passed,impl9=failed,impl1=passed
