#!/usr/bin/env bash
# The project's own tests: install what is missing, build everything with the tests
# (generator, harness, smoke suite, and the example kernels against the TorchBench traces
# when they are found beside the checkout), and run them all with CTest; then the Python
# package, installed into a virtual environment, and its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset dev "$@"
cmake --build --preset dev
ctest --preset dev
scripts/test-python.sh
