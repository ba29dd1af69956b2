"""A real one-node Slurm cluster for tests: munged, slurmctld and slurmd (Debian's slurm-wlm and
munge) started as root on loopback, with fake GPUs that Slurm hands out as generic resources.

Slurm accepts only character devices as GPU files, so the fake GPUs are device nodes made with
mknod in the test's own folder (major 195, NVIDIA's; nothing opens them). With AutoDetect=off
Slurm takes them as given and sets CUDA_VISIBLE_DEVICES for each task that asks for --gres=gpu:N.
Every daemon is stopped, and its jobs cancelled, when the `with` block ends.

    with OneNodeSlurm(folder, gpus=2) as slurm:
        subprocess.run(["sbatch", "--wait", ...], env=slurm.environment())
"""
import os
import shutil
import socket
import stat
import subprocess
import time


class SlurmUnavailable(Exception):
    pass


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class OneNodeSlurm:
    def __init__(self, folder, gpus=2, cpus=None):
        self.folder = os.path.abspath(folder)
        self.gpus = gpus
        self.cpus = cpus or os.cpu_count()
        self.processes = []
        self.conf = os.path.join(self.folder, "slurm.conf")

    def environment(self, base=None):
        return dict(base if base is not None else os.environ, SLURM_CONF=self.conf)

    def __enter__(self):
        missing = [p for p in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo") if shutil.which(p) is None and
                   not os.path.exists("/usr/sbin/" + p)]
        if missing:
            raise SlurmUnavailable("not installed: " + ", ".join(missing) + " (Debian's slurm-wlm and munge; "
                                   "scripts/install-deps.sh installs them)")
        if os.geteuid() != 0:
            raise SlurmUnavailable("slurmd must start as root")
        shutil.rmtree(self.folder, ignore_errors=True)
        for sub in ("dev", "state", "spool", "munge"):
            os.makedirs(os.path.join(self.folder, sub))
        os.chmod(os.path.join(self.folder, "munge"), 0o700)
        for gpu in range(self.gpus):
            os.mknod(os.path.join(self.folder, "dev", f"nvidia{gpu}"), 0o600 | stat.S_IFCHR, os.makedev(195, gpu))
        key = os.path.join(self.folder, "munge", "munge.key")
        with open(key, "wb") as handle:
            handle.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.munge_socket = os.path.join(self.folder, "munge", "munge.socket")
        try:
            self._start(["munged", "--foreground", "--force", "--key-file", key, "--socket", self.munge_socket,
                         "--pid-file", os.path.join(self.folder, "munge", "munged.pid"),
                         "--log-file", os.path.join(self.folder, "munge", "munged.log"),
                         "--seed-file", os.path.join(self.folder, "munge", "munged.seed")], "munged")
            self._wait_for(lambda: os.path.exists(self.munge_socket), "munged's socket", 20)
            host = socket.gethostname().split(".")[0]
            gres = f" Gres=gpu:{self.gpus}" if self.gpus else ""
            with open(self.conf, "w") as conf:
                conf.write(f"""# A one-node cluster for backendbench's tests (one_node_slurm.py).
ClusterName=backendbench
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
StateSaveLocation={self.folder}/state
SlurmdSpoolDir={self.folder}/spool
SlurmctldPidFile={self.folder}/slurmctld.pid
SlurmdPidFile={self.folder}/slurmd.pid
SlurmctldLogFile={self.folder}/slurmctld.log
SlurmdLogFile={self.folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
GresTypes=gpu
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName={host} NodeAddr=127.0.0.1 CPUs={self.cpus}{gres} State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
            with open(os.path.join(self.folder, "gres.conf"), "w") as conf:
                conf.write("AutoDetect=off\n")
                if self.gpus:
                    conf.write(f"Name=gpu File={self.folder}/dev/nvidia[0-{self.gpus - 1}]\n")
            self._start(["slurmctld", "-D", "-i", "-f", self.conf], "slurmctld")
            self._start(["slurmd", "-D", "-f", self.conf, "-N", host], "slurmd")
            self._wait_for(self._idle, "the node to be idle (sinfo)", 60)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self, argv, name):
        log = open(os.path.join(self.folder, name + ".out"), "w")
        self.processes.append((name, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                      env=self.environment(), start_new_session=True)))

    def _idle(self):
        done = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=self.environment())
        return done.returncode == 0 and done.stdout.strip() == "idle"

    def _wait_for(self, ready, what, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            for name, process in self.processes:
                if process.poll() is not None:
                    raise SlurmUnavailable(f"{name} ended with status {process.returncode} while waiting for {what}: " +
                                           self.logs()[-3000:])
            if ready():
                return
            time.sleep(0.5)
        raise SlurmUnavailable(f"timed out waiting for {what}: " + self.logs()[-3000:])

    def logs(self):
        text = ""
        for name in ("munged.out", "slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out"):
            path = os.path.join(self.folder, name)
            if os.path.exists(path):
                text += f"\n---- {name}\n" + open(path, errors="replace").read()[-4000:]
        return text

    def __exit__(self, *exception):
        if any(name == "slurmctld" for name, _ in self.processes):
            subprocess.run(["scancel", "--full", "--user", "root"], capture_output=True, env=self.environment())
        for name, process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, 9)
                    process.wait()
        self.processes = []
        return False
