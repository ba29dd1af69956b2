#!/usr/bin/env python3
"""A room never includes the headers of a room above it (the project's house rules: a room never
includes the headers of a room above it; every file's folder names the process it runs in). The
rooms, lowest first:

  generator/language      the trace language, naming, diagnostics, the job's JSON form
  build_tests/runtime     the case library both sides of the wall share: cases, values, comparison,
                          observation, facts, timing, backends, verdicts
  build_tests/protocol    the protocol both sides of the wall speak (the worker's requests, device memory)
  build_tests/worker      the kernel worker: the only code beside kernel code (nothing that judges)
  build_tests/supervisor  the process that judges: the workers' pool, checks, the job runner
  build_tests/planner     the run's process: plans jobs, builds, submits, collects, reports
  build_tests/agents      the llm and kernel_agent loops (nothing of the command)
  build_tests/frontends/cli  the backendbench command: its arguments, the planner's phases in order

Prints each include that reaches up, with its file and line, and exits 1 when there is one.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# room folder -> include prefixes of rooms above it
FORBIDDEN = {
    "generator/language": ["backendbench/", "protocol/", "worker/", "supervisor/", "planner/", "agents/", "cli/", "emit/", "model/"],
    "build_tests/runtime": ["protocol/", "worker/", "supervisor/", "planner/", "agents/", "cli/"],
    "build_tests/protocol": ["worker/", "supervisor/", "planner/", "agents/", "cli/"],
    # The worker and the supervisor stand side by side on the case library, the wall between them.
    "build_tests/worker": ["supervisor/", "planner/", "agents/", "cli/"],
    "build_tests/supervisor": ["worker/", "planner/", "agents/", "cli/"],
    # The planner judges nothing itself and never loads kernel code: it stands on the supervisor.
    "build_tests/planner": ["worker/", "agents/", "cli/"],
    "build_tests/agents": ["cli/", "worker/"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
found = []
for room, above in FORBIDDEN.items():
    for folder, _, names in os.walk(os.path.join(ROOT, room)):
        for name in sorted(names):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.join(folder, name)
            with open(path, errors="replace") as source:
                for number, line in enumerate(source, 1):
                    match = INCLUDE.match(line)
                    if match and any(match.group(1).startswith(prefix) for prefix in above):
                        found.append(f"{os.path.relpath(path, ROOT)}:{number}:1: error: {room} includes "
                                     f"\"{match.group(1)}\" of a room above it; expected only its own and lower rooms' headers")
print("\n".join(found) if found else f"no room includes a room above it ({len(FORBIDDEN)} rooms checked)")
sys.exit(1 if found else 0)
