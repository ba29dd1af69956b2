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

With --served, the same kernels go through the path the llm backends' candidate checks take: the
executable serves one check job per backend (--backendbench_serve; job_service.h), their
libraries copied under its kernel root, each loaded into a spare worker started before its job;
the same verdicts and side effects are asserted, the server answers every request, and nothing
is written under the kernel root but the requests' own files.

With --entries, each backend's job is a served CTest entry as `backendbench run` runs them: the
client (backendbench-entry) hands it to one of two listening supervisors (--backendbench_listen,
with spare workers), and impl8 looks for the supervisors' abstract sockets from its sandboxed
worker to have an idle one write passing verdicts where it says; the same verdicts and side
effects are asserted, every entry is served, no forged verdicts appear, and, to show the attack is
real, the same kernel run unsandboxed does reach them and does write its forged file.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import served_jobs  # noqa: E402 (beside this file)
from checks import check, failures  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--executable", required=True)
parser.add_argument("--build", required=True)
parser.add_argument("--kernels", required=True)
parser.add_argument("--served", action="store_true", help="check each backend through a served executable")
parser.add_argument("--entries", action="store_true", help="check each backend as a served CTest entry")
args = parser.parse_args()

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
# A served entry's client and its supervisors, outside any CTest resource allocation.
entry_environment = {name: value for name, value in environment.items() if not name.startswith("CTEST_RESOURCE_GROUP")}


BACKENDS = ["aten"] + [f"impl{n}" for n in range(1, 9)]
# Where impl8 asks a supervisor it reaches to write passing verdicts.
FORGED = "/tmp/backendbench_verdicts_forged_through_a_supervisor.jsonl"


def start_supervisors(prefix, count, extra_environment=None, kernel_root=None):
    """`count` supervisors of the gallery's executable listening under `prefix` (as `backendbench
    run` starts them), with spare workers for kernels under `kernel_root` (the build); each once
    it says it listens."""
    servers = []
    for k in range(count):
        address = f"{prefix}/{os.path.basename(args.executable)}/cpu/{k}"
        server = subprocess.Popen([args.executable, "--backendbench_listen=" + address,
                                   "--backendbench_serve=" + (kernel_root or args.build)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(work, f"{prefix}.{k}.log"), "w"), text=True,
                                  env=dict(entry_environment, **(extra_environment or {})))
        ready = json.loads(server.stdout.readline() or "{}")
        check(ready.get("listening") == address, f"supervisor {address} listens ({ready})")
        servers.append(server)
    return servers


def stop_supervisors(servers):
    for server in servers:
        server.stdin.close()
    for server in servers:
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


def run_entry(prefix, backend, verdicts):
    """One backend's job as a served CTest entry; the client's completed process."""
    job = {"schema": "backendbench-job", "version": 1, "suite": "gallery_security", "operator": "relu.default",
           "backend": backend, "mode": "check"}
    return subprocess.run([os.path.join(args.build, "backendbench-entry"), prefix, args.executable,
                           "--backendbench_job=" + json.dumps(job), "--backendbench_verdicts=" + verdicts,
                           "--case-timeout=20"], capture_output=True, text=True, env=entry_environment, timeout=600)


def run_entries():
    """Every backend of the gallery as a served entry, two supervisors listening (one serves the
    entry, the other is idle: what impl8 would ask); then impl8 once unsandboxed, which must reach
    them. (exit status as a run of the executable would have it, what was printed, errors)."""
    prefix = f"backendbench-security-{os.getpid()}"
    servers = start_supervisors(prefix, 2)
    printed, status, served = "", 0, 0
    for number, backend in enumerate(BACKENDS):
        part = os.path.join(work, f"entry{number}.jsonl")
        done = run_entry(prefix, backend, part)
        printed += done.stdout + done.stderr
        served += f"(served by {prefix}/" in done.stdout
        if os.path.exists(part):
            with open(verdicts_path, "a") as verdicts, open(part) as written:
                for line in written:
                    verdicts.write(line)
                    status = 1 if json.loads(line)["status"] == "failed" else status
    check(served == len(BACKENDS), f"every entry was served by a supervisor ({served} of {len(BACKENDS)})")
    check(not os.path.exists(FORGED), "impl8, sandboxed, reached no supervisor: no forged verdicts")
    # The attack is real: unsandboxed, impl8's worker sees the supervisors' sockets, and an idle one
    # runs its forged job. Its worker loads impl8's library alone (the other kernels' load-time
    # code must not run unsandboxed), from a manifest a request names, as the llm loops' do.
    proof_root = os.path.join(work, "impl8_only")
    os.makedirs(proof_root)
    only = os.path.join(work, "impl8_only.txt")
    with open(only, "w") as handle:
        handle.writelines(line for line in open(os.path.join(args.build, "generated", "kernel_manifests", "gallery_security.txt"))
                          if "relu_implementation_8." in line)
    manifest, _ = served_jobs.copy_under(only, proof_root)
    proof_prefix = prefix + "-unsandboxed"
    proof = start_supervisors(proof_prefix, 1, {"BACKENDBENCH_SANDBOX": "none"}, proof_root)
    job = {"schema": "backendbench-job", "version": 1, "suite": "gallery_security", "operator": "relu.default",
           "backend": "impl8", "mode": "check"}
    request = {"schema": "backendbench-job-request", "version": 1, "job": json.dumps(job), "kernel_manifest": manifest,
               "verdicts": os.path.join(work, "unsandboxed.jsonl"), "log": os.path.join(work, "unsandboxed.log")}
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect("\0" + f"{proof_prefix}/{os.path.basename(args.executable)}/cpu/0")
    client.sendall((json.dumps(request) + "\n").encode())
    answer = client.makefile().readline()
    client.close()
    stop_supervisors(proof)
    check('"verdicts"' in answer, f"the unsandboxed supervisor ran impl8's job ({answer.strip()[:200]})")
    # The forged job runs on the idle supervisor and may end after impl8's own answer (under the full
    # suite's load it did, and this read found none): wait for its first whole verdict.
    deadline = time.time() + 60
    while time.time() < deadline and not (os.path.exists(FORGED) and open(FORGED).read().endswith("\n")):
        time.sleep(0.2)
    forged = [json.loads(line) for line in open(FORGED)] if os.path.exists(FORGED) else []
    check(forged and all(v["backend"] == "aten" and v["status"] == "passed" for v in forged),
          f"impl8 unsandboxed did reach an idle supervisor, which wrote its forged passes ({len(forged)} verdicts)")
    if os.path.exists(FORGED):
        os.remove(FORGED)
    stop_supervisors(servers)
    errors = "".join(open(os.path.join(work, name)).read() for name in os.listdir(work) if name.startswith(prefix))
    return subprocess.CompletedProcess([], status, printed, errors)


def run_served():
    """Every backend of the gallery's manifest, one served check job each; (exit status as a run
    of the executable would have it, what was printed, the kernel root's files after the jobs)."""
    root = os.path.join(work, "attempts")
    os.makedirs(root)
    manifest, expected_files = served_jobs.copy_under(
        os.path.join(args.build, "generated", "kernel_manifests", "gallery_security.txt"), root)
    server_log = os.path.join(work, "server.log")
    server = subprocess.Popen([args.executable, "--backendbench_serve=" + root], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=open(server_log, "w"), text=True, env=environment)
    printed, answered, status = "", 0, 0
    for number, backend in enumerate(BACKENDS):
        job = {"schema": "backendbench-job", "version": 1, "suite": "gallery_security", "operator": "relu.default",
               "backend": backend, "mode": "check", "case_timeout": 20}
        part, log = os.path.join(work, f"part{number}.jsonl"), os.path.join(root, f"request{number}.log")
        expected_files.add(os.path.basename(log))
        request = {"schema": "backendbench-job-request", "version": 1, "job": json.dumps(job), "verdicts": part,
                   "kernel_manifest": manifest, "log": log}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        response = json.loads(server.stdout.readline() or "{}")
        printed += open(log).read()
        if response.get("schema") == "backendbench-job-response" and "error" not in response:
            answered += 1
        elif backend == "impl6" and "impl6" not in open(manifest).read():
            answered += 1  # no Python bridge in this build: the job names a backend it does not have
        else:
            print(f"the server did not run {backend}'s job: {response}")
        with open(verdicts_path, "a") as verdicts, open(part) as written:
            for line in written:
                verdicts.write(line)
                status = 1 if json.loads(line)["status"] == "failed" else status
    server.stdin.close()
    out = server.stdout.read()
    server.wait(timeout=60)
    err = open(server_log).read()
    check(server.returncode == 0, f"the served executable ended by itself when its input closed ({server.returncode})")
    scratch = os.path.join(tempfile.gettempdir(), f"backendbench_supervisor_{server.pid}")
    check(not os.path.exists(scratch), f"and removed its workers' scratch and logs ({scratch})")
    check(answered == len(BACKENDS), f"the served executable answered all {len(BACKENDS)} requests ({answered})")
    check(out == "", f"nothing but responses on the served executable's standard output: {out[:200]!r}")
    stray = sorted(set(os.listdir(root)) - expected_files)
    check(not stray, f"nothing written under the kernel root but the requests' logs: {stray}")
    return subprocess.CompletedProcess(server.args, status, printed, err)


if args.entries:
    done = run_entries()
elif args.served:
    done = run_served()
else:
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
check(set(by_backend) >= {"aten", "impl1", "impl2", "impl3", "impl4", "impl5", "impl7", "impl8"},
      f"every backend ran: {sorted(by_backend)}")
# impl7 is correct: it slows only the reference its own worker times (./bench catches it).
for backend in ["aten", "impl3", "impl7"]:
    check(by_backend.get(backend) and all(v["status"] == "passed" for v in by_backend[backend]), f"{backend} passes")
# impl6 is a .py kernel: there only where the build has the Python bridge.
for backend in ["impl1", "impl2", "impl4", "impl5", "impl8"] + (["impl6"] if "impl6" in by_backend else []):
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
check(not os.path.exists(FORGED), "no verdicts forged through a supervisor")
new_in_tmp = sorted(name for name in set(os.listdir("/tmp")) - tmp_before if not name.startswith("backendbench_"))
check(not new_in_tmp, f"nothing new in /tmp but the harness's own folders: {new_in_tmp}")
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
