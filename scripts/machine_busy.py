"""How busy the machine was over a run, for the throughput scripts (llm_loop_speed.py,
reward_speed.py): the cores from /proc/stat, the GPU from nvidia-smi sampled every 200 ms."""
import subprocess


def busy_jiffies():
    """(busy, total) jiffies of all cores, from /proc/stat's first line."""
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


class GpuSampler:
    """nvidia-smi's utilization.gpu every 200 ms while the run lasts; None without nvidia-smi."""

    def __init__(self):
        try:
            self.process = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                                             "-lms", "200"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            self.process = None

    def stop(self):
        if self.process is None:
            return None
        self.process.terminate()
        values = [float(line.split(",")[0]) for line in self.process.communicate()[0].splitlines() if line.strip()]
        return sum(values) / len(values) if values else None


class MachineBusy:
    """Cores and GPU busy from start() to stop(): stop() returns (cores %, GPU % or None)."""

    def start(self):
        self.before = busy_jiffies()
        self.gpu = GpuSampler()
        return self

    def stop(self):
        gpu_busy = self.gpu.stop()
        busy_after, total_after = busy_jiffies()
        cores = 100.0 * (busy_after - self.before[0]) / max(1, total_after - self.before[1])
        return cores, gpu_busy
