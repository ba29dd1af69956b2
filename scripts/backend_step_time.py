#!/usr/bin/env python3
"""A transformer training step with and without the backend: step time, outputs, coverage.

Builds a small Transformer encoder from torch.nn (seeded, no downloads), runs forward, loss and
backward eagerly and with the backend enabled, and prints the median step time of each, their
ratio, the largest difference in the loss and the gradients, and per overridden operator how
many calls ran a kernel. The figures are one machine's, from one run.

    scripts/backend_step_time.py --device cuda [--library build/libbackendbench_backend.so]
"""
import argparse
import statistics
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--library", help="the backend library (default: the installed package's)")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--sequence", type=int, default=128)
    args = parser.parse_args()

    if args.library:
        torch.ops.load_library(args.library)
        ops = torch.ops.backendbench
        enable = lambda: ops.enable([], [], "", False, True)
        disable, calls, registered = ops.disable, ops.calls, ops.registered
    else:
        import backendbench
        enable, disable, registered = backendbench.enable, backendbench.disable, backendbench.registered
        calls = lambda: [f"{op} {k} {a}" for op, (k, a) in backendbench.calls().items()]

    device = torch.device(args.device)
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(args.d_model, nhead=8, dim_feedforward=4 * args.d_model,
                                             dropout=0.0, activation="relu", batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=args.layers, enable_nested_tensor=False).to(device)
    x = torch.randn(args.batch, args.sequence, args.d_model, device=device)

    def step():
        model.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        loss.backward()
        return loss.detach(), [p.grad.detach().clone() for p in model.parameters()]

    def timed():
        times = []
        for _ in range(args.steps):
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            result = step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return statistics.median(times[3:]), result  # the first steps warm caches up

    eager_time, (eager_loss, eager_grads) = timed()
    enable()
    print(f"enabled: {len(registered())} kernel registrations")
    backend_time, (loss, grads) = timed()
    counts = calls()
    disable()
    grad_diff = max((g - e).abs().max().item() for g, e in zip(grads, eager_grads))
    print(f"device {device} ({torch.cuda.get_device_name() if device.type == 'cuda' else 'cpu'}), torch {torch.__version__}")
    print(f"median step: eager {eager_time * 1e3:.3f} ms, backend {backend_time * 1e3:.3f} ms, "
          f"ratio {backend_time / eager_time:.3f}")
    print(f"loss: eager {eager_loss.item():.6f}, backend {loss.item():.6f}; largest gradient difference {grad_diff:.3g}")
    print("calls per operator (kernel, ATen inside kernels):")
    for line in counts:
        op, kernel, aten = line.split(" ")
        if int(kernel) or int(aten):
            print(f"  {op:20s} {kernel:>8s} {aten:>8s}")


if __name__ == "__main__":
    main()
