#!/usr/bin/env bash
# Installs what backendbench builds against, when it is missing (idempotent):
#   libtorch      the `torch` Python package (pip): its CMake package and libraries
#   GoogleTest    Debian's libgtest-dev        Google Benchmark  libbenchmark-dev
#   CLI11         libcli11-dev (generator CLI) nlohmann-json  nlohmann-json3-dev (dataset JSON)
#   libcurl       libcurl4-openssl-dev: the llm backends' model API clients (HTTPS)
#   numpy, expecttest  pip: what torch.testing's OpInfo database imports (the opinfo suite's export)
#   timm, transformers, torchvision  pip: the model suite's models (python -m backendbench.models)
#   plotly        pip: plotly.min.js, embedded into each run's report.html (works offline)
#   chromium      Debian's chromium: the report's test opens it headless
#   bubblewrap    the sandbox kernel workers run in (worker/serve.h, sandbox.h)
#   ccache        compiles the project's own sources once for every build folder (BACKENDBENCH_CCACHE)
#   clang-16, lld compile and link the llm backends' candidates against a precompiled header whose
#                 templates are instantiated once (BACKENDBENCH_CANDIDATE_CXX): 3 times faster than g++
#                 (clang 16, not Debian 12's clang 14, for C++20's lambda captures of structured bindings)
#   slurm-wlm, munge  Slurm and its authentication: the test of `backendbench run --slurm` starts a
#                 one-node cluster (build_tests/tests/one_node_slurm.py); sbatch is what --slurm calls
#   CMake, Ninja, g++: build tools
#   with --fuzz also clang and libclang-rt-14-dev: libFuzzer and the sanitizers (scripts/fuzz.sh)
# BACKENDBENCH_NO_INSTALL=1 only checks (machines without package access). Each step prints one
# line; apt's and pip's output goes to BACKENDBENCH_INSTALL_LOG (default build/install-deps.log).
set -euo pipefail

missing_packages=()
need() {  # need <package> <test command...>
  local package=$1
  shift
  "$@" >/dev/null 2>&1 || missing_packages+=("$package")
}
need cmake command -v cmake
need ninja-build command -v ninja
need g++ command -v g++
need libgtest-dev test -e /usr/include/gtest/gtest.h
need libbenchmark-dev test -e /usr/include/benchmark/benchmark.h
need libcli11-dev test -e /usr/include/CLI/CLI.hpp
need nlohmann-json3-dev test -e /usr/include/nlohmann/json.hpp
need libcurl4-openssl-dev compgen -G '/usr/include/*/curl/curl.h'
need chromium command -v chromium
need bubblewrap command -v bwrap
need ccache command -v ccache
need clang-16 command -v clang++-16
need lld command -v ld.lld
need slurm-wlm test -x /usr/sbin/slurmctld
need munge test -x /usr/sbin/munged
if [[ ${1:-} == --fuzz ]]; then
  need clang command -v clang++
  need libclang-rt-14-dev compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
fi

python=${PYTHON:-python3}
has_torch=1
"$python" -c 'import torch' >/dev/null 2>&1 || has_torch=0
missing_modules=()
for module in numpy expecttest timm transformers torchvision plotly; do
  "$python" -c "import $module" >/dev/null 2>&1 || missing_modules+=("$module")
done

if [[ "${BACKENDBENCH_NO_INSTALL:-0}" == 1 ]]; then
  [[ ${#missing_packages[@]} -eq 0 ]] || echo "install-deps: not installing (BACKENDBENCH_NO_INSTALL=1); missing: ${missing_packages[*]}"
  [[ $has_torch == 1 ]] || echo "install-deps: not installing (BACKENDBENCH_NO_INSTALL=1); missing: torch"
  [[ ${#missing_modules[@]} -eq 0 ]] || echo "install-deps: not installing (BACKENDBENCH_NO_INSTALL=1); missing: ${missing_modules[*]}"
  exit 0
fi

# Each step prints one line; what apt and pip print goes to the log (hundreds of lines of
# progress), whose last lines are shown when a step fails (scripts/quietly.sh).
log=${BACKENDBENCH_INSTALL_LOG:-$(cd "$(dirname "$0")/.." && pwd)/build/install-deps.log}
step() {  # step <what> <command...>
  local what=$1
  shift
  "$(dirname "$0")/quietly.sh" install-deps "installing $what" "$log" "$@"
}
if [[ ${#missing_packages[@]} -gt 0 ]]; then
  sudo_cmd=()
  [[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
  step "Debian's package index" "${sudo_cmd[@]}" apt-get update
  step "${missing_packages[*]}" "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing_packages[@]}"
fi
if [[ $has_torch == 0 ]]; then
  step "torch with pip (several GB with its CUDA libraries)" "$python" -m pip install torch
fi
if [[ ${#missing_modules[@]} -gt 0 ]]; then
  step "${missing_modules[*]} with pip" "$python" -m pip install "${missing_modules[@]}"
fi
echo "install-deps: ok (torch $("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null))"
