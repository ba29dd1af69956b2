#!/usr/bin/env bash
# The first run as a new user has it, each phase timed: install what is missing, configure the
# default preset, build the backendbench command, run the smoke and edge suites with it (which
# builds what they need); then one translation unit that includes only ATen/ATen.h, compiled with
# the build's own flags, and the ratio of the command's build to that one file.
# Usage: scripts/first_run.sh [arguments for the run, e.g. --device cpu]
# Run it on a fresh clone. The compiler cache starts empty (a folder of its own, removed after),
# as on a new machine; FIRST_RUN_WITH_CACHE=1 uses the machine's.
set -euo pipefail
cd "$(dirname "$0")/.."
phases=()
timed() {  # timed <phase> <command...>: runs it, keeps its wall seconds
  local phase=$1 start
  shift
  start=$(date +%s.%N)
  "$@"
  phases+=("$phase $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')")")
}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
[[ ${FIRST_RUN_WITH_CACHE:-0} == 1 ]] || export CCACHE_DIR="$probe/ccache"
timed install scripts/install-deps.sh
mkdir -p build
timed configure scripts/quietly.sh first_run "configuring build/" build/configure.log cmake --preset default
timed build scripts/quietly.sh first_run "building the backendbench command" build/build.log \
  cmake --build --preset default --target backendbench
rm -rf build/first_run_results
timed run build/backendbench run --suite smoke,edge --backend aten,directory --out build/first_run_results "$@"

# One file that only includes ATen, compiled as the build compiles the case library's files (the
# command ninja has for the first of backendbench_runtime's objects, without a precompiled
# header). awk reads the whole list: a reader that stops early ends ninja by SIGPIPE, which
# pipefail turns into this script's failure.
printf '#include <ATen/ATen.h>\nint backendbench_first_run_probe() { return 0; }\n' >"$probe/aten_only.cpp"
command=$(ninja -C build -t commands backendbench_runtime | awk '/backendbench_runtime\.dir\// && !found {print; found = 1}')
command=$(sed -E 's/-include [^ ]*cmake_pch\.hxx//g; s/-Winvalid-pch//g; s/ -o [^ ]+/ -o '"${probe//\//\\/}"'\/aten_only.o/; s/ -c [^ ]+/ -c '"${probe//\//\\/}"'\/aten_only.cpp/; s/ -MD -MT [^ ]+ -MF [^ ]+//' <<<"$command")
timed aten_file bash -c "cd build && CCACHE_DISABLE=1 $command"

echo "first_run: phase seconds"
for entry in "${phases[@]}"; do
  echo "first_run:   $entry"
done
build=$(printf '%s\n' "${phases[@]}" | awk '$1 == "build" {print $2}')
one=$(printf '%s\n' "${phases[@]}" | awk '$1 == "aten_file" {print $2}')
total=$(printf '%s\n' "${phases[@]}" | awk '$1 != "aten_file" {s += $2} END {print s}')
echo "first_run: install to results ${total} s; the command's build is $(python3 -c "print(f'{$build / $one:.1f}')")x one file that includes ATen/ATen.h"
