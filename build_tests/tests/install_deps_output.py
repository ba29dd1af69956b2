#!/usr/bin/env python3
"""scripts/install-deps.sh prints one line per install step and keeps the installers' output in its
log; a failing step ends the script with the installer's exit status, the step named and the end
of the log shown. Run against stand-ins: a python whose torch is missing and whose pip prints a
page of progress (then succeeds or fails as told), and an apt-get that does the same, so that
nothing is installed on the machine running the test.

Usage: install_deps_output.py --source <repository root>
"""
import argparse
import os
import subprocess
import sys
import tempfile

PROGRESS_LINES = 300

FAKE_PYTHON = r"""#!/usr/bin/env bash
# Stand-in python: torch is missing until pip "installs" it; pip prints a page of progress.
if [[ $1 == -c ]]; then
  case $2 in
    "import torch") exit 1 ;;
    *"torch.__version__"*) echo "0.0+stand-in"; exit 0 ;;
    *) exit 0 ;;
  esac
fi
if [[ $1 == -m && $2 == pip ]]; then
  for i in $(seq PROGRESS); do echo "Collecting package-$i (progress line $i)"; done
  echo "pip stand-in: last line" >&2
  exit "${STAND_IN_STATUS:-0}"
fi
exit 2
""".replace("PROGRESS", str(PROGRESS_LINES))

FAKE_APT = r"""#!/usr/bin/env bash
for i in $(seq PROGRESS); do echo "Setting up package-$i ..."; done
exit 0
""".replace("PROGRESS", str(PROGRESS_LINES))


def run(source, work, status):
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    python = os.path.join(bin_dir, "python")
    for path, text in ((python, FAKE_PYTHON), (os.path.join(bin_dir, "apt-get"), FAKE_APT)):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    log = os.path.join(work, f"install-{status}.log")
    env = dict(os.environ, PYTHON=python, BACKENDBENCH_INSTALL_LOG=log, STAND_IN_STATUS=str(status),
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    env.pop("BACKENDBENCH_NO_INSTALL", None)
    done = subprocess.run([os.path.join(source, "scripts", "install-deps.sh")], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    logged = ""
    if os.path.exists(log):
        with open(log) as f:
            logged = f.read()
    return done, logged, log


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    failures = []

    def expect(condition, message, output):
        if not condition:
            failures.append(f"{message}\n--- output ---\n{output}")

    with tempfile.TemporaryDirectory() as work:
        done, logged, log = run(args.source, work, 0)
        output = done.stdout + done.stderr
        lines = done.stdout.splitlines()
        expect(done.returncode == 0, f"a successful install exited {done.returncode}", output)
        expect(any(line.startswith("install-deps: installing torch with pip") and f"(log: {log})" in line for line in lines),
               "no one-line 'installing torch' step naming the log", output)
        expect(lines[-1:] == ["install-deps: ok (torch 0.0+stand-in)"], "the last line is not the 'ok' line", output)
        # One line per step (apt's two, pip's two at most) and the ok line; the progress stays in the log.
        expect(len(lines) <= 5, f"{len(lines)} lines printed; expected one per step", output)
        expect("progress line" not in output, "the installers' progress reached the output", output)
        expect(logged.count("progress line") == PROGRESS_LINES, "the log lacks pip's progress", logged[-500:])

        done, logged, log = run(args.source, work, 3)
        output = done.stdout + done.stderr
        expect(done.returncode == 3, f"a failing pip gave exit status {done.returncode}; expected its own, 3", output)
        expect(f"install-deps: error: installing torch with pip (several GB with its CUDA libraries) failed (exit status 3); "
               f"the end of {log}:" in done.stderr, "no error line naming the step, the status and the log", output)
        expect("pip stand-in: last line" in done.stderr, "the end of the log is not shown", output)
        expect("install-deps: ok" not in output, "a failed install said ok", output)
        expect(done.stderr.count("progress line") <= 20, "more than the log's last 20 lines were shown", output)

    for failure in failures:
        print("FAILED:", failure, file=sys.stderr)
    print("install-deps: one line per step, the rest in its log" if not failures else f"{len(failures)} expectations failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
