#!/usr/bin/env python3
"""Served CTest entries (job_service.h: serve_entries; backendbench-entry): a test executable
started with --backendbench_listen answers entries' jobs on an abstract Unix socket, and the client
exits as the executable would. Checks, each of which fails the test:

  1. a served aten job: exit 0, every verdict written by the server and passed, the output says
     which server served it, and the same job run by the executable alone gives the same verdicts;
  2. a job naming a case the suite lacks: exit 1, its verdict failed;
  3. a server whose one slot is taken answers "busy": the client then runs the executable itself
     (same verdicts, no "served by");
  4. no server under the prefix: the client runs the executable itself;
  5. an entry with an argument a request cannot carry (--gtest_filter) is never served;
  6. the socket is out of a sandboxed process's reach: a connect from inside the kernels' sandbox
     (backendbench-build-sandbox) fails where the same connect from here succeeds;
  7. a kernel's jobs one after another use one kernel worker (the server's one child stays the
     same process), and a new one once a library the manifest names changes;
  8. the server ends when its standard input closes;
  9. a server given the build (--backendbench_serve), whose kernel libraries lie in its top
     folder, starts a spare worker before any job, and a kernel's job takes it: the server's one
     child is the same process before and after the job (no second worker started beside it);
 10. a request whose manifest names a library by a link in the build leading outside it (under
     /tmp, which the sandbox hides): the spare, which sees only the build, does not take it; a
     worker of the manifest, which sees where the link leads, runs it, and its cases pass.

    served_entries.py --build build-dev --suite smoke --operator relu.default
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def job(suite, operator, cases=None, backend="aten"):
    document = {"schema": "backendbench-job", "version": 1, "suite": suite, "operator": operator, "backend": backend,
                "mode": "check", "device": "cpu"}
    if cases:
        document["cases"] = cases
    return json.dumps(document)


def verdicts_of(path):
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def outcome(verdicts):
    return sorted((verdict["case"], verdict["status"]) for verdict in verdicts)


def children(pid):
    """The processes whose parent is `pid` (a kernel worker, or the sandbox's first process)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open("/proc/%s/stat" % entry).read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry))
    return found


def connect(address):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect("\0" + address)
    return client


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--operator", required=True)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    executable = os.path.join(build, "backendbench_test_" + args.suite)
    client = os.path.join(build, "backendbench-entry")
    work = tempfile.mkdtemp(prefix="backendbench_served_entries_")
    prefix = "backendbench-test-%d" % os.getpid()
    address = prefix + "/" + os.path.basename(executable) + "/cpu/0"
    environment = {name: value for name, value in os.environ.items() if not name.startswith("CTEST_RESOURCE_GROUP")}

    server = subprocess.Popen([executable, "--backendbench_listen=" + address], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=open(os.path.join(work, "server.log"), "w"), text=True,
                              env=environment)
    ready = json.loads(server.stdout.readline() or "{}")
    if ready.get("listening") != address:
        fail("the server did not say it listens on %s: %r (log: %s)" % (address, ready, work))

    def entry(name, job_text, extra=(), use_prefix=prefix):
        verdicts = os.path.join(work, name + ".verdicts.jsonl")
        run = subprocess.run([client, use_prefix, executable, "--backendbench_job=" + job_text,
                              "--backendbench_verdicts=" + verdicts, "--case-timeout=60", *extra],
                             capture_output=True, text=True, env=environment, timeout=600)
        return run, verdicts_of(verdicts)

    # 1. served, and the same as the executable alone
    served, served_verdicts = entry("served", job(args.suite, args.operator))
    if served.returncode != 0 or "served by " + address not in served.stdout:
        fail("a served aten job: exit %d, output:\n%s%s" % (served.returncode, served.stdout, served.stderr))
    if not served_verdicts or any(verdict["status"] != "passed" for verdict in served_verdicts):
        fail("a served aten job's verdicts: %r" % outcome(served_verdicts))
    alone_verdicts_path = os.path.join(work, "alone.verdicts.jsonl")
    alone = subprocess.run([executable, "--backendbench_job=" + job(args.suite, args.operator),
                            "--backendbench_verdicts=" + alone_verdicts_path], capture_output=True, text=True,
                           env=environment)
    if alone.returncode != 0 or outcome(verdicts_of(alone_verdicts_path)) != outcome(served_verdicts):
        fail("the executable alone: exit %d, %r against served %r" % (alone.returncode,
             outcome(verdicts_of(alone_verdicts_path)), outcome(served_verdicts)))
    print("served: %d cases passed, as the executable alone" % len(served_verdicts))

    # 2. a failed case fails the entry
    missing, missing_verdicts = entry("missing", job(args.suite, args.operator, ["no_such_case"]))
    if missing.returncode != 1 or [verdict["status"] for verdict in missing_verdicts] != ["failed"]:
        fail("a job of a missing case: exit %d, verdicts %r, output:\n%s" % (missing.returncode,
             outcome(missing_verdicts), missing.stdout))
    print("a missing case: exit 1, its verdict failed")

    # 3. busy: a connection holds the one slot; the client runs the executable itself
    holder = connect(address)
    time.sleep(0.2)
    busy, busy_verdicts = entry("busy", job(args.suite, args.operator))
    holder.close()
    if busy.returncode != 0 or "served by" in busy.stdout or outcome(busy_verdicts) != outcome(served_verdicts):
        fail("beside a busy server: exit %d, verdicts %r, output:\n%s" % (busy.returncode, outcome(busy_verdicts),
             busy.stdout))
    print("busy: run by the executable itself, same verdicts")

    # 4. no server under the prefix
    unserved, unserved_verdicts = entry("unserved", job(args.suite, args.operator), use_prefix=prefix + "-none")
    if unserved.returncode != 0 or "served by" in unserved.stdout or outcome(unserved_verdicts) != outcome(served_verdicts):
        fail("without a server: exit %d, verdicts %r" % (unserved.returncode, outcome(unserved_verdicts)))
    print("no server: run by the executable itself")

    # 5. an argument a request cannot carry
    filtered, _ = entry("filtered", job(args.suite, args.operator), extra=["--gtest_filter=*"])
    if filtered.returncode != 0 or "served by" in filtered.stdout:
        fail("an entry with --gtest_filter was served (or failed): exit %d\n%s" % (filtered.returncode, filtered.stdout))
    print("--gtest_filter: not served")

    # 6. out of the sandbox's reach
    probe = ("import socket, sys\n"
             "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
             "try:\n    s.connect('\\0' + sys.argv[1])\nexcept OSError as e:\n    print('refused', e.errno); sys.exit(0)\n"
             "print('connected')\n")
    sandbox = os.path.join(build, "backendbench-build-sandbox")
    outside = subprocess.run(["/usr/bin/python3", "-c", probe, address], capture_output=True, text=True)
    # From "/": the sandbox hides /tmp and $HOME, where a checkout may lie.
    inside = subprocess.run([sandbox, "--", "/usr/bin/python3", "-c", probe, address], capture_output=True,
                            text=True, env=dict(environment, BACKENDBENCH_SANDBOX="bwrap"), cwd="/")
    if outside.stdout.strip() != "connected" or not inside.stdout.startswith("refused"):
        fail("a connect from outside: %r; from the sandbox: %r %r" % (outside.stdout, inside.stdout, inside.stderr))
    print("sandbox: refused inside (%s), connected outside" % inside.stdout.strip())

    # 7. one worker for a kernel's jobs, a new one when a library of the manifest changes
    manifest = os.path.join(build, "generated", "kernel_manifests", "default.txt")
    libraries = [word for line in open(manifest) for word in line.split() if "relu_implementation_1" in word]
    if not libraries:
        fail("no relu impl1 library in %s" % manifest)
    workers = []
    for attempt in range(3):
        if attempt == 2:
            status = os.stat(libraries[0])
            os.utime(libraries[0], ns=(status.st_atime_ns, status.st_mtime_ns + 1000))
        kernel, kernel_verdicts = entry("kernel%d" % attempt, job(args.suite, args.operator, backend="impl1"))
        if kernel.returncode != 0 or "served by" not in kernel.stdout or not kernel_verdicts or \
                any(verdict["status"] != "passed" for verdict in kernel_verdicts):
            fail("kernel job %d: exit %d, verdicts %r, output:\n%s%s" % (attempt + 1, kernel.returncode,
                 outcome(kernel_verdicts), kernel.stdout, kernel.stderr))
        workers.append(children(server.pid))
    os.utime(libraries[0], ns=(status.st_atime_ns, status.st_mtime_ns))
    # The pool keys workers by device class and manifest line: on CUDA the kernel's jobs kept two
    # (seen on an H200), on the CPU one; every one of them is replaced when the library changed.
    classes = 1 if os.environ.get("BACKENDBENCH_DEVICE", "cpu") == "cpu" else 2
    if not 1 <= len(workers[0]) <= classes or workers[1] != workers[0] or len(workers[2]) != len(workers[0]) \
            or workers[2] & workers[0]:
        fail("the server's children after three kernel jobs, the library touched before the third: %r" % workers)
    print("kernel jobs: one worker kept (%s), a new one once its library changed (%s)" % (workers[0], workers[2]))

    # 8. ends with its input
    server.stdin.close()
    try:
        status = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        fail("the server did not end when its standard input closed")
    if status != 0:
        fail("the server ended with status %d (log: %s)" % (status, work))
    print("the server ended with its input")

    def server_of_build(name):
        """A server given the build (--backendbench_serve, so a spare worker waits there), listening
        under the prefix <prefix>-<name>; its process and address."""
        address = prefix + "-" + name + "/" + os.path.basename(executable) + "/cpu/0"
        process = subprocess.Popen([executable, "--backendbench_listen=" + address, "--backendbench_serve=" + build],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=open(os.path.join(work, name + "_server.log"), "w"), text=True, env=environment)
        ready = json.loads(process.stdout.readline() or "{}")
        if ready.get("listening") != address:
            fail("the server of the build (%s) did not say it listens on %s: %r (log: %s)" % (name, address, ready, work))
        return process, address

    # 9. a server of the build: its spare becomes the first kernel job's worker
    spare_server, _ = server_of_build("spare")
    before = children(spare_server.pid)
    kernel, kernel_verdicts = entry("spare", job(args.suite, args.operator, backend="impl1"), use_prefix=prefix + "-spare")
    after = children(spare_server.pid)
    spare_server.stdin.close()
    spare_server.wait(timeout=30)
    if kernel.returncode != 0 or "served by" not in kernel.stdout or not kernel_verdicts or \
            any(verdict["status"] != "passed" for verdict in kernel_verdicts):
        fail("a kernel job on the server of the build: exit %d, verdicts %r, output:\n%s%s" % (
            kernel.returncode, outcome(kernel_verdicts), kernel.stdout, kernel.stderr))
    # On CUDA the job's other device class starts a worker of its own beside the spare it took.
    if len(before) != 1 or not before <= after or len(after) > classes:
        fail("the server of the build's children before a kernel job %r, after it %r: its spare was not taken" % (before, after))
    print("a server of the build: its spare (%s) ran the kernel job" % before)

    # 10. a library reached by a link out of the spare's roots: a worker of the manifest runs it
    outside = tempfile.mkdtemp(prefix="backendbench_served_outside_", dir="/tmp")
    links = tempfile.mkdtemp(prefix="backendbench_served_links_", dir=build)
    try:
        copy = os.path.join(outside, os.path.basename(libraries[0]))
        shutil.copy(libraries[0], copy)
        link = os.path.join(links, os.path.basename(libraries[0]))
        os.symlink(copy, link)
        linked_manifest = os.path.join(links, "manifest.txt")
        with open(linked_manifest, "w") as handle:
            handle.write(link + "\n")
        linked_server, linked_address = server_of_build("linked")
        verdicts_path = os.path.join(work, "linked.verdicts.jsonl")
        request = {"schema": "backendbench-job-request", "version": 1,
                   "job": job(args.suite, args.operator, backend="impl1"), "verdicts": verdicts_path,
                   "log": os.path.join(work, "linked.log"), "kernel_manifest": linked_manifest}
        client_socket = connect(linked_address)
        client_socket.sendall((json.dumps(request) + "\n").encode())
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = client_socket.recv(65536)
            if not chunk:
                break
            answer += chunk
        client_socket.close()
        linked_server.stdin.close()
        linked_server.wait(timeout=30)
        response = json.loads(answer.decode() or "{}")
        linked_verdicts = verdicts_of(verdicts_path)
        if response.get("failed", 1) != 0 or not linked_verdicts or \
                any(verdict["status"] != "passed" for verdict in linked_verdicts):
            fail("a library linked from outside the spare's roots: response %r, verdicts %r, log:\n%s" % (
                response, outcome(linked_verdicts), open(os.path.join(work, "linked.log")).read()[-3000:]
                if os.path.exists(os.path.join(work, "linked.log")) else ""))
        print("a library linked from outside the build: run by a worker of its manifest, %d cases passed" %
              len(linked_verdicts))
    finally:
        shutil.rmtree(outside, ignore_errors=True)
        shutil.rmtree(links, ignore_errors=True)


if __name__ == "__main__":
    main()
