"""Watches the CTest entries a command runs, from /proc: which GPU CTest gave each, how many ran at
once on a GPU, and whether a timing entry (./bench) ever ran beside another entry on its GPU.

Used by the project's tests (build_tests/tests/cli_end_to_end.py) and scripts/gpu_scaling.py:

    with EntrySampler(process.pid) as sampler:
        process.wait()
    sampler.most_per_gpu     # {"id:0": 4, "id:1": 4}
    sampler.timing_shared    # [(gpu, [names]), ...]: a ./bench beside another entry on its GPU
    sampler.unallocated      # samples that saw an entry CTest gave no GPU
    sampler.threads          # {"tests": {"1"}, "bench": {None}}: the OMP_NUM_THREADS entries ran with
"""
import os
import threading
import time


def is_server(pid):
    """A supervisor `backendbench run` keeps for its entries (--backendbench_listen): not an entry. Nor is a process
    that is ending (its memory, command line and environment already gone: a supervisor the run stopped)."""
    try:
        command_line = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return True
    return not command_line or b"--backendbench_listen=" in command_line


def entry_processes(root):
    """(executable name, GPU allocation, OMP_NUM_THREADS) of each running CTest entry below process `root`: a test
    executable, ./bench or a served entry's client (backendbench-entry) whose parent is not one (a child between fork
    and exec has the same executable); not the supervisors kept to serve the entries. Only `root`'s descendants:
    another command's leftovers are not this one's."""
    parents, names = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            names[pid] = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            parents[pid] = [line.split()[1] for line in open(f"/proc/{pid}/status") if line.startswith("PPid:")][0]
        except (OSError, IndexError):
            continue

    def below_root(pid):
        for _ in range(64):
            if pid == str(root):
                return True
            pid = parents.get(pid)
            if pid is None:
                return False
        return False

    found = []
    for pid, name in names.items():
        if not (name.startswith("backendbench_test_") or name in ("bench", "backendbench-entry")) or \
                names.get(parents[pid]) == name or is_server(pid):
            continue
        if not below_root(pid):
            continue
        try:
            environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if environ == [b""]:
            continue  # ending since its command line was read: its memory, environment included, is gone
        gpu = [v.split(b"=", 1)[1].decode().split(",")[0] for v in environ if v.startswith(b"CTEST_RESOURCE_GROUP_0_GPUS=")]
        threads = [v.split(b"=", 1)[1].decode() for v in environ if v.startswith(b"OMP_NUM_THREADS=")]
        found.append((name, gpu[0] if gpu else None, threads[0] if threads else None))
    return found


class EntrySampler:
    def __init__(self, root, period=0.01):
        self.root, self.period = root, period
        self.most_per_gpu, self.timing_shared, self.unallocated, self.samples, self.threads = {}, [], 0, 0, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        while not self._stop.is_set():
            per_gpu = {}
            for name, gpu, threads in entry_processes(self.root):
                self.threads.setdefault("bench" if name == "bench" else "tests", set()).add(threads)
                if gpu is None:
                    self.unallocated += 1
                    continue
                per_gpu.setdefault(gpu, []).append(name)
            for gpu, names in per_gpu.items():
                self.most_per_gpu[gpu] = max(self.most_per_gpu.get(gpu, 0), len(names))
                if "bench" in names and len(names) > 1:
                    self.timing_shared.append((gpu, names))
            self.samples += 1
            time.sleep(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exception):
        self._stop.set()
        self._thread.join()
        return False
