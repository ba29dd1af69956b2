#!/usr/bin/env bash
# One line for a step of the install and quickstart scripts, its output appended to a log, whose
# last 20 lines are shown (on stderr) when the step fails; exits with the step's status then.
# Usage: scripts/quietly.sh <who> <what> <log> <command...>
#   prints "<who>: <what> (log: <log>)"; on failure "<who>: error: <what> failed (exit status N); ..."
set -uo pipefail
who=$1 what=$2 log=$3
shift 3
mkdir -p "$(dirname "$log")"
echo "$who: $what (log: $log)"
{ echo "== $what: $*"; "$@"; } >>"$log" 2>&1
status=$?
if [[ $status != 0 ]]; then
  echo "$who: error: $what failed (exit status $status); the end of $log:" >&2
  tail -n 20 "$log" | sed 's/^/  /' >&2
fi
exit "$status"
