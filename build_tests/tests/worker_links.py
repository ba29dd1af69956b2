#!/usr/bin/env python3
"""The kernel worker links nothing that judges: of the functions the backendbench-worker executable
holds (nm -C), none is the supervisor's (the checks, the case pipeline, the job runner, the served
supervisors, the workers' pool) nor a writer of verdicts or of the results folder. The worker room's
target links the case library alone (build_tests/CMakeLists.txt), and a static archive brings in only
what is used; this reads what was brought in.

  worker_links.py <backendbench-worker>
"""
import subprocess
import sys

# Functions a process beside kernel code must not hold: what decides or records a verdict.
JUDGING = [
    "backendbench::registered_checks(", "backendbench::check_case(", "backendbench::time_case(",
    "backendbench::run_job_case(", "backendbench::job_verdicts(", "backendbench::serve_jobs(",
    "backendbench::serve_entries(", "backendbench::start_kernel_workers(", "backendbench::measure_in_worker(",
    "backendbench::start_verdicts(", "backendbench::append_verdict(", "backendbench::write_original_files(",
    "backendbench::start_run(",
]
# What it must hold, so that an unreadable or empty symbol table cannot pass.
SERVING = ["backendbench::serve_kernel_worker(", "backendbench::measure_case("]

worker = sys.argv[1]
listed = subprocess.run(["nm", "-C", "--defined-only", worker], capture_output=True, text=True)
if listed.returncode != 0:
    print(f"{worker}: error: nm could not read it: {listed.stderr.strip()}; expected an executable with symbols")
    sys.exit(1)
names = [line.split(" ", 2)[-1] for line in listed.stdout.splitlines() if line.count(" ") >= 2]
failures = []
for wanted in SERVING:
    if not any(name.startswith(wanted) for name in names):
        failures.append(f"{worker}: error: it holds no {wanted[:-1]}; expected the worker's loop and timing")
for judging in JUDGING:
    held = [name for name in names if name.startswith(judging)]
    if held:
        failures.append(f"{worker}: error: the kernel worker holds {held[0]}, which judges; expected the worker room to link "
                        "the case library alone (no supervisor/ code, no verdict or results writer)")
print("\n".join(failures) if failures else f"the kernel worker holds {len(names)} functions, none of the {len(JUDGING)} that judge")
sys.exit(1 if failures else 0)
