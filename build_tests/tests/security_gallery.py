#!/usr/bin/env python3
"""The security gallery (build_tests/gallery/security) run as a user would, with secrets planted.

Fake keys go into the environment and into a $HOME of the test's own (files a kernel would
look for); a listener waits on loopback port 47113; an earlier run's results file is put in the
build tree. Then the gallery's test executable runs every kernel, and the test asserts:
  - every wrong kernel fails, with the reason its expect-failure line names; the correct one
    (which steals) passes; aten passes;
  - no planted secret appears in anything printed, in the verdicts, or in any file the run could
    have written ($HOME, /tmp, the kernel folder, the build tree);
  - nothing was written outside the run's own files: no file a kernel names, no connection to the
    listener, the earlier results byte for byte as they were;
  - the exit status is the truth (1: wrong kernels failed).
"""
import argparse
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--executable", required=True)
parser.add_argument("--build", required=True)
parser.add_argument("--kernels", required=True)
args = parser.parse_args()
failures = []


def check(condition, what):
    print(("ok: " if condition else "FAILED: ") + what)
    if not condition:
        failures.append(what)


work = tempfile.mkdtemp(prefix="backendbench_security_")
home = os.path.join(work, "home")
os.makedirs(os.path.join(home, ".config"))
planted = {name: "sk-" + secrets.token_hex(16) for name in
           ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_SERVICE_PASSWORD"]}
home_secret = "home-secret-" + secrets.token_hex(16)
for name in [".backendbench_secret_probe", ".config/backendbench_secret_probe"]:
    with open(os.path.join(home, name), "w") as handle:
        handle.write(home_secret + "\n")
every_secret = list(planted.values()) + [home_secret]

# An earlier run's results, which nothing may change.
earlier = os.path.join(args.build, "results", "security_earlier_run", "relu.verdicts.jsonl")
os.makedirs(os.path.dirname(earlier), exist_ok=True)
earlier_text = '{"status":"failed","note":"an earlier run"}\n'
with open(earlier, "w") as handle:
    handle.write(earlier_text)

connections = []
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 47113))
listener.listen(8)
listener.settimeout(0.5)
stop = threading.Event()


def accept():
    while not stop.is_set():
        try:
            connection, _ = listener.accept()
            connections.append(connection.recv(1024))
            connection.close()
        except OSError:
            pass


threading.Thread(target=accept, daemon=True).start()
tmp_before = set(os.listdir("/tmp"))
verdicts_path = os.path.join(work, "verdicts.jsonl")
environment = dict(os.environ, HOME=home, **planted)
done = subprocess.run([args.executable, "--backendbench_verdicts=" + verdicts_path, "--case-timeout=20"],
                      capture_output=True, text=True, env=environment, timeout=1200)
printed = done.stdout + done.stderr
print(printed[-5000:])
time.sleep(3)  # the forking kernel's children would act 2 s after their call
stop.set()

check(done.returncode == 1, f"exit status 1 (wrong kernels failed), got {done.returncode}")
verdicts = [json.loads(line) for line in open(verdicts_path)] if os.path.exists(verdicts_path) else []
by_backend = {}
for verdict in verdicts:
    by_backend.setdefault(verdict["backend"], []).append(verdict)
check(set(by_backend) >= {"aten", "impl1", "impl2", "impl3", "impl4", "impl5", "impl7"}, f"every backend ran: {sorted(by_backend)}")
# impl7 is correct: it slows only the reference its own worker times (./bench catches it).
for backend in ["aten", "impl3", "impl7"]:
    check(by_backend.get(backend) and all(v["status"] == "passed" for v in by_backend[backend]), f"{backend} passes")
# impl6 is a .py kernel: there only where the build has the Python bridge.
for backend in ["impl1", "impl2", "impl4", "impl5"] + (["impl6"] if "impl6" in by_backend else []):
    source_name = "relu_implementation_6.py" if backend == "impl6" else f"relu_implementation_{backend[4:]}.cpp"
    source = open(os.path.join(args.kernels, "relu", source_name)).read()
    expected = re.search(r"expect-failure: (.*)", source).group(1)
    results = by_backend.get(backend, [])
    failed = [v for v in results if v["status"] == "failed"]
    # An empty tensor, or inputs it happens to get right, may pass; the kernel fails as a whole.
    check(len(failed) >= len(results) / 2, f"{backend} fails ({len(failed)} of {len(results)} cases)")
    check(failed and all(any(re.search(expected, e) for e in v["errors"]) for v in failed),
          f"{backend} fails with its reason ({expected})")

for secret in every_secret:
    check(secret not in printed, "no secret in what was printed")
    check(secret not in open(verdicts_path).read() if os.path.exists(verdicts_path) else True, "no secret in the verdicts")
stolen = []
for folder in [home, "/tmp", args.kernels, args.build]:
    for root, _, names in os.walk(folder):
        for name in names:
            if "stolen_by_a_kernel" in name or "written_by_a_kernel" in name:
                stolen.append(os.path.join(root, name))
check(not stolen, f"no file a kernel wrote: {stolen}")
check(set(os.listdir("/tmp")) - tmp_before <= {n for n in os.listdir("/tmp") if n.startswith("backendbench_")},
      "nothing new in /tmp but the harness's own folders")
check(open(earlier).read() == earlier_text, "an earlier run's results are untouched")
forged = []
for root, _, names in os.walk(os.path.join(args.build, "results")):
    for name in names:
        if "FORGED_BY_A_KERNEL" in open(os.path.join(root, name), errors="replace").read():
            forged.append(os.path.join(root, name))
check(not forged, f"no results file forged: {forged}")
check(not connections, f"no kernel reached the network: {connections}")

shutil.rmtree(work, ignore_errors=True)
shutil.rmtree(os.path.dirname(earlier), ignore_errors=True)
print(f"{len(failures)} failed checks" if failures else "all checks passed")
sys.exit(1 if failures else 0)
