#!/usr/bin/env bash
# Fuzzes the trace parser (with the round-trip property), the dataset's JSON reader and the
# emitter's escaping with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    (default 60 s; targets: trace_parser dataset escaping)
# Builds the `fuzz` preset (clang) into build-fuzz/, seeds each target from the project's own
# traces, and keeps what it learns in build-fuzz/corpus/<target>/ between runs. A finding (crash,
# sanitizer report, round-trip violation, leak, timeout, out-of-memory) is written to
# build-fuzz/findings/<target>/ and the script exits 1 after running every target.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(trace_parser dataset escaping)
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "scripts/fuzz.sh: error: seconds per target '$seconds' is not a positive integer; expected e.g. 60" >&2
  exit 2
fi

scripts/install-deps.sh --fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

declare -A dictionary=([trace_parser]=trace.dict [dataset]=dataset.dict [escaping]=)
status=0
for target in "${targets[@]}"; do
  if [[ ! -v dictionary[$target] ]]; then
    echo "scripts/fuzz.sh: error: unknown target '$target'; expected trace_parser, dataset or escaping" >&2
    exit 2
  fi
  corpus=build-fuzz/corpus/$target
  findings=build-fuzz/findings/$target
  mkdir -p "$corpus" "$findings"
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
           -artifact_prefix="$findings/")
  [[ -z ${dictionary[$target]} ]] || options+=(-dict="generator/fuzz/${dictionary[$target]}")
  echo "== fuzz_$target for ${seconds}s"
  log=build-fuzz/fuzz_$target.log
  if build-fuzz/generator/fuzz/fuzz_$target "${options[@]}" "$corpus" "build-fuzz/generator/fuzz/seeds/$target" >"$log" 2>&1; then
    grep -E '^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss_mb' "$log" | tail -3
    grep -E 'cov: [0-9]+' "$log" | tail -1
  else
    status=1
    echo "scripts/fuzz.sh: error: fuzz_$target found a problem; reproducer in $findings/, log in $log" >&2
    grep -E -A25 'ERROR: |finding:|==[0-9]+==' "$log" | head -60 >&2
  fi
done
exit $status
