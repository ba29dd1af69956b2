#!/usr/bin/env python3
"""A build's own correctness entries run the way `backendbench run` runs its entries by default
(served; planner/entry_servers.h): supervisors kept for the run, `--slots` of each test
executable, each started with --backendbench_listen (and --backendbench_serve=<build>, so spare
workers wait for the kernels), and each selected entry run by CTest as a client
(backendbench-entry) that hands its job to a free one. For measuring what serving saves against
plain `ctest` on the same entries (scripts/isolation_cost.sh). Prints one line of figures:

  served: <n> entries (<m> served, ...), servers ready in <s> s, entries <s> s (summed: waited <s> s, handled <s> s),
          total <s> s, <passed>/<n> passed

Usage: scripts/served_ctest.py --build DIR [-L LABEL] [-R REGEX] [-j 4] [--slots 4] [--log DIR]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def cmake_argument(text):
    return "[==[" + text + "]==]"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("-L", dest="label", default="")
    parser.add_argument("-R", dest="regex", default="")
    parser.add_argument("-j", dest="jobs", type=int, default=4)
    parser.add_argument("--slots", type=int, default=0, help="servers of each executable (default: -j)")
    parser.add_argument("--log", default="")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    client = os.path.join(build, "backendbench-entry")
    selection = []
    if args.label:
        selection += ["-L", args.label]
    if args.regex:
        selection += ["-R", args.regex]
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1", *selection], capture_output=True,
                             text=True, check=True)
    tests = json.loads(listing.stdout)["tests"]
    folder = tempfile.mkdtemp(prefix="served_ctest_")
    log = args.log or folder
    os.makedirs(log, exist_ok=True)
    prefix = "backendbench-served-ctest-%d" % os.getpid()
    executables, lines = set(), []
    for test in tests:
        command = [argument for argument in test["command"] if not argument.startswith("--gtest_output=")]
        executables.add(command[0])
        lines.append("add_test(%s %s)" % (cmake_argument(test["name"]),
                                          " ".join(cmake_argument(argument) for argument in [client, prefix, *command])))
        lines.append("set_tests_properties(%s PROPERTIES TIMEOUT 1800 SKIP_RETURN_CODE 77)" % cmake_argument(test["name"]))
    with open(os.path.join(folder, "CTestTestfile.cmake"), "w") as handle:
        handle.write("\n".join(lines) + "\n")

    started = time.monotonic()
    servers = []
    environment = {name: value for name, value in os.environ.items() if not name.startswith("CTEST_RESOURCE_GROUP")}
    server_log = open(os.path.join(log, "servers.log"), "w")
    for executable in sorted(executables):
        for k in range(args.slots or args.jobs):
            address = "%s/%s/cpu/%d" % (prefix, os.path.basename(executable), k)
            servers.append(subprocess.Popen([executable, "--backendbench_listen=" + address, "--backendbench_serve=" + build],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=server_log, text=True,
                                            env=environment))
    listening = sum(1 for server in servers if "listening" in (server.stdout.readline() or ""))
    ready = time.monotonic() - started
    run = subprocess.run(["ctest", "--test-dir", folder, "-j", str(args.jobs), "--output-on-failure"], capture_output=True,
                         text=True, env=environment)
    entries = time.monotonic() - started - ready
    for server in servers:
        server.stdin.close()
    for server in servers:
        server.wait(timeout=60)
    total = time.monotonic() - started
    with open(os.path.join(log, "ctest.log"), "w") as handle:
        handle.write(run.stdout + run.stderr)
    passed = [line for line in run.stdout.splitlines() if "tests passed" in line]
    last_log = os.path.join(folder, "Testing", "Temporary", "LastTest.log")
    text = open(last_log, errors="replace").read() if os.path.exists(last_log) else ""
    if text:  # each entry's "(served by X in R ms; waited W ms, handled in H ms)"
        shutil.copy(last_log, os.path.join(log, "LastTest.log"))
    figures = re.findall(r"served by \S+ in \d+ ms; waited (\d+) ms, handled in (\d+) ms", text)
    print("served: %d entries (%d served, %d of %d servers listening), servers ready in %.1f s, entries %.1f s "
          "(summed: waited %.1f s, handled %.1f s), total %.1f s, %s" % (
              len(tests), len(figures), listening, len(servers), ready, entries,
              sum(int(w) for w, _ in figures) / 1000, sum(int(h) for _, h in figures) / 1000, total,
              passed[0].strip() if passed else "no summary"))
    shutil.rmtree(folder, ignore_errors=True)
    return 0 if run.returncode in (0, 8) else run.returncode


if __name__ == "__main__":
    sys.exit(main())
