#!/usr/bin/env python3
"""What an executable's room may link, read from the functions it holds (nm -C): a static archive
brings in only what is used, and this reads what was brought in.

  room_links.py --room worker <backendbench-worker>
      The kernel worker links nothing that judges: none of the supervisor's functions (the
      checks, the case pipeline, the job runner, the served supervisors, the workers' pool) nor
      a writer of verdicts or of the results folder. The worker room's target links the case
      library alone (build_tests/CMakeLists.txt).
  room_links.py --room command <backendbench>
      The command (the planner, the agents, the CLI) links nothing of the supervisor's or the
      worker's: no checks, case pipeline, measurement or kernel workers. It starts supervisors as
      executables of their own, and its build needs none of the files that parse ATen/ATen.h
      (backendbench_records is the case library's part it links).
"""
import argparse
import subprocess
import sys

ROOMS = {
    # Functions a process beside kernel code must not hold: what decides or records a verdict.
    "worker": {
        "must_not": [
            "backendbench::registered_checks(", "backendbench::check_case(", "backendbench::time_case(",
            "backendbench::run_job_case(", "backendbench::job_verdicts(", "backendbench::serve_jobs(",
            "backendbench::serve_entries(", "backendbench::start_kernel_workers(", "backendbench::measure_in_worker(",
            "backendbench::start_verdicts(", "backendbench::append_verdict(", "backendbench::write_original_files(",
            "backendbench::start_run(",
        ],
        # What it must hold, so that an unreadable or empty symbol table cannot pass.
        "must": ["backendbench::serve_kernel_worker(", "backendbench::measure_case("],
        "holds": "the worker's loop and timing",
        "expected": "the worker room to link the case library alone (no supervisor/ code, no verdict or results writer)",
    },
    "command": {
        "must_not": [
            "backendbench::registered_checks(", "backendbench::check_case(", "backendbench::time_case(",
            "backendbench::run_job_case(", "backendbench::serve_jobs(", "backendbench::serve_entries(",
            "backendbench::start_kernel_workers(", "backendbench::measure_in_worker(", "backendbench::start_run(",
            "backendbench::serve_kernel_worker(", "backendbench::measure_case(", "backendbench::compare_outputs(",
        ],
        "must": ["backendbench::job_verdicts(", "backendbench::parse_settings("],
        "holds": "the verdicts read back and the settings",
        "expected": "the command to link the case library's records alone (backendbench_records), no supervisor/ or worker/ code",
    },
}

parser = argparse.ArgumentParser()
parser.add_argument("--room", choices=sorted(ROOMS), required=True)
parser.add_argument("executable")
args = parser.parse_args()
room = ROOMS[args.room]

executable = args.executable
listed = subprocess.run(["nm", "-C", "--defined-only", executable], capture_output=True, text=True)
if listed.returncode != 0:
    print(f"{executable}: error: nm could not read it: {listed.stderr.strip()}; expected an executable with symbols")
    sys.exit(1)
names = [line.split(" ", 2)[-1] for line in listed.stdout.splitlines() if line.count(" ") >= 2]
failures = []
for wanted in room["must"]:
    if not any(name.startswith(wanted) for name in names):
        failures.append(f"{executable}: error: it holds no {wanted[:-1]}; expected {room['holds']}")
for forbidden in room["must_not"]:
    held = [name for name in names if name.startswith(forbidden)]
    if held:
        failures.append(f"{executable}: error: the {args.room} holds {held[0]}; expected {room['expected']}")
print("\n".join(failures) if failures else
      f"the {args.room} holds {len(names)} functions, none of the {len(room['must_not'])} it must not")
sys.exit(1 if failures else 0)
