#!/usr/bin/env python3
"""How long CUDA takes to start in N processes at once, spread over a machine's GPUs: each process
(CUDA's driver library through ctypes, no PyTorch) calls cuInit, makes its GPU's primary context
current and allocates 1 MiB; prints the medians of each step and when the processes were ready.

  scripts/cuda_start.py 16                 # 16 processes over every GPU, as the driver's defaults
  scripts/cuda_start.py 16 --queues 1      # with CUDA_DEVICE_MAX_CONNECTIONS=1
  scripts/cuda_start.py 16 --one-file      # each in bubblewrap, seeing its GPU's device file alone

Served supervisors start as the last two do (README, "Every GPU of a machine"); this measures why.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time


def child(started):
    cuda = ctypes.CDLL("libcuda.so.1")
    begun = time.time()
    assert cuda.cuInit(0) == 0
    initialised = time.time()
    device, context, pointer = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
    assert cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0
    assert cuda.cuCtxSetCurrent(context) == 0
    with_context = time.time()
    assert cuda.cuMemAlloc_v2(ctypes.byref(pointer), 1 << 20) == 0
    print(json.dumps({"init_s": initialised - begun, "context_s": with_context - initialised,
                      "ready_after_s": time.time() - started}), flush=True)


def device_file(gpu):
    """/dev/nvidia<minor> of CUDA's device `gpu`, through its PCI address (as gpu_files.cpp does)."""
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0
    device, address = ctypes.c_int(), ctypes.create_string_buffer(64)
    assert cuda.cuDeviceGet(ctypes.byref(device), gpu) == 0
    assert cuda.cuDeviceGetPCIBusId(address, 64, device) == 0
    fields = lambda text: [int(part, 16) for part in text.replace(".", ":").split(":")]
    for folder in os.listdir("/proc/driver/nvidia/gpus"):
        if fields(folder) == fields(address.value.decode()):
            for line in open(f"/proc/driver/nvidia/gpus/{folder}/information"):
                if line.startswith("Device Minor:"):
                    return "/dev/nvidia" + line.split(":")[1].strip()
    raise SystemExit(f"no device file for GPU {gpu}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("processes", type=int)
    parser.add_argument("--gpus", type=int, default=0, help="GPUs to spread over (default: every GPU)")
    parser.add_argument("--queues", type=int, help="CUDA_DEVICE_MAX_CONNECTIONS of each process")
    parser.add_argument("--one-file", action="store_true", help="each process sees its GPU's device file alone")
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child is not None:
        return child(options.child)
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        raise SystemExit("cuda_start.py: error: no CUDA driver library (libcuda.so.1) on this machine; run it on a GPU machine")
    gpus = options.gpus or int(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU "))
    files = [device_file(gpu) for gpu in range(gpus)] if options.one_file else []
    shared = [f for f in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-caps") if os.path.exists(f)]
    started = time.time()
    processes = []
    for index in range(options.processes):
        gpu = index % gpus
        environment = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
        if options.queues:
            environment["CUDA_DEVICE_MAX_CONNECTIONS"] = str(options.queues)
        command = [sys.executable, os.path.abspath(__file__), "0", "--child", str(started)]
        if options.one_file:
            environment["CUDA_VISIBLE_DEVICES"] = "0"
            binds = [word for file in [*shared, files[gpu]] for word in ("--dev-bind", file, file)]
            command = ["bwrap", "--dev-bind", "/", "/", "--dev", "/dev", *binds, "--"] + command
        processes.append(subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, text=True))
    rows = [json.loads(process.communicate()[0]) for process in processes]
    median = lambda key: round(statistics.median(row[key] for row in rows), 2)
    print(json.dumps({"processes": options.processes, "gpus": gpus, "queues": options.queues, "one_file": options.one_file,
                      "init_s": median("init_s"), "context_s": median("context_s"), "ready_after_s": median("ready_after_s"),
                      "last_ready_after_s": round(max(row["ready_after_s"] for row in rows), 2)}))


if __name__ == "__main__":
    main()
