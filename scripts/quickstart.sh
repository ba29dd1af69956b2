#!/usr/bin/env bash
# The main job: install what is missing, build the smoke suite against the aten and
# directory (generated_kernels/) backends, run it, and print the correctness results.
# Extra arguments go to CMake's configure step (e.g. -DBACKENDBENCH_SUITES="smoke;torchbench").
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default "$@"
cmake --build --preset default
ctest --preset default
