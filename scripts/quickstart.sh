#!/usr/bin/env bash
# The main job: install what is missing, build the backendbench command, and run the smoke and
# edge-case suites against the aten and directory (generated_kernels/) backends with it: it builds
# what they need, runs correctness (CTest) and timing (./bench), prints the scores, and writes a
# results folder with its HTML report. Extra arguments go to the run (e.g. --ops relu --device cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# One line each; CMake's and the compiler's output goes to a log, whose end is shown on failure.
rm -f build/configure.log build/build.log
scripts/quietly.sh quickstart "configuring build/" build/configure.log cmake --preset default
scripts/quietly.sh quickstart "building the backendbench command" build/build.log \
  cmake --build --preset default --target backendbench
build/backendbench run --suite smoke,edge --backend aten,directory --out build/quickstart_results "$@"
