#!/usr/bin/env python3
"""CTest's GPU allocation on a machine without GPUs: a resource spec of 2 fake GPUs, 1 slot each.

The smoke and edge suites' entries (their commands as the build generated them, each with
RESOURCE_GROUPS gpus:1) run under `ctest --resource-spec-file ... -j 4` from a folder of this
test's own, with their verdicts written there. While they run, /proc is sampled: no GPU ever has
more running entries than its slots. Then every verdict names the GPU its entry was given, and
both GPUs were used; without the spec, no verdict names one.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--build", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--ctest", default="ctest")
args = parser.parse_args()
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED:", what)


def cmake_argument(text):
    return "[=[" + text + "]=]"


shown = json.loads(subprocess.run([args.ctest, "--test-dir", args.build, "--show-only=json-v1", "-L", "^(smoke|edge)$"],
                                  check=True, capture_output=True, text=True).stdout)
entries = shown["tests"]
check(len(entries) >= 4, f"smoke and edge entries found ({len(entries)})")
for test in shown["tests"]:
    groups = [p["value"] for p in test.get("properties", []) if p["name"] == "RESOURCE_GROUPS"]
    check(groups == [[{"requirements": [{".type": "gpus", "slots": 1}]}]],
          f"{test['name']} declares one GPU slot (RESOURCE_GROUPS: {groups})")

shutil.rmtree(args.work, ignore_errors=True)
os.makedirs(args.work)
spec = os.path.join(args.work, "gpus.json")
json.dump({"version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": "0", "slots": 1}, {"id": "1", "slots": 1}]}]},
          open(spec, "w"))


def write_entries(folder, chosen):
    os.makedirs(folder, exist_ok=True)
    lines = []
    for test in chosen:
        command = [a for a in test["command"] if not a.startswith(("--gtest_output=", "--backendbench_verdicts="))]
        verdicts = os.path.join(folder, test["name"].replace("/", "_") + ".verdicts.jsonl")
        command.append("--backendbench_verdicts=" + verdicts)
        lines.append("add_test(" + cmake_argument(test["name"]) + " " + " ".join(cmake_argument(a) for a in command) + ")")
        lines.append("set_tests_properties(" + cmake_argument(test["name"]) + " PROPERTIES RESOURCE_GROUPS gpus:1 SKIP_RETURN_CODE 77)")
    open(os.path.join(folder, "CTestTestfile.cmake"), "w").write("\n".join(lines) + "\n")


def verdicts_of(folder):
    found = []
    for name in os.listdir(folder):
        if name.endswith(".verdicts.jsonl"):
            found += [json.loads(line) for line in open(os.path.join(folder, name)) if line.strip()]
    return found


# Which fake GPU each running entry was given, from the environment CTest started it with.
running_most = {}
stop = threading.Event()


def sample():
    while not stop.is_set():
        now = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
                executable = os.readlink(f"/proc/{pid}/exe")
            except OSError:
                continue
            if not os.path.basename(executable).startswith("backendbench_test_"):
                continue
            # An entry's process, not one it forked (between fork and exec a child has the same
            # executable and environment).
            try:
                parent = [line.split()[1] for line in open(f"/proc/{pid}/status") if line.startswith("PPid:")][0]
                if os.path.basename(os.readlink(f"/proc/{parent}/exe")).startswith("backendbench_test_"):
                    continue
            except (OSError, IndexError):
                continue
            for variable in environ:
                if variable.startswith(b"CTEST_RESOURCE_GROUP_0_GPUS="):
                    gpu = variable.split(b"=", 1)[1].decode()
                    gpu = gpu.split(",")[0]
                    now[gpu] = now.get(gpu, 0) + 1
        for gpu, count in now.items():
            running_most[gpu] = max(running_most.get(gpu, 0), count)
        time.sleep(0.01)


with_spec = os.path.join(args.work, "with_spec")
write_entries(with_spec, entries)
sampler = threading.Thread(target=sample)
sampler.start()
done = subprocess.run([args.ctest, "--test-dir", with_spec, "--resource-spec-file", spec, "-j", "4"], capture_output=True, text=True)
stop.set()
sampler.join()
check(done.returncode == 0, f"the entries pass with the spec (ctest status {done.returncode}):\n{done.stdout[-2000:]}")
verdicts = verdicts_of(with_spec)
check(len(verdicts) > 0, "verdicts written")
gpus = {v.get("gpu") for v in verdicts}
check(gpus == {"0", "1"}, f"every verdict names the GPU CTest gave its entry, and both were used ({gpus})")
check(running_most and max(running_most.values()) == 1 and set(running_most) == {"id:0", "id:1"},
      f"no fake GPU ran more entries at once than its 1 slot ({running_most})")

without_spec = os.path.join(args.work, "without_spec")
write_entries(without_spec, entries[:4])
done = subprocess.run([args.ctest, "--test-dir", without_spec, "-j", "2"], capture_output=True, text=True)
check(done.returncode == 0, f"the entries pass without a spec (ctest status {done.returncode})")
check(all("gpu" not in v for v in verdicts_of(without_spec)), "without a spec no verdict names a GPU")

print("\n".join(failures) if failures else "gpu allocation: ok")
sys.exit(1 if failures else 0)
