#!/usr/bin/env python3
"""A transformer training step with and without the backend: step time, outputs, coverage.

Builds a small Transformer encoder from torch.nn (seeded, no downloads), runs forward, loss and
backward eagerly and with the backend enabled, in alternating rounds (each round a block of eager
steps then a block of backend steps, so drift hits both), and prints the median step time of
each, the ratio of the medians with the range of the per-round ratios, the largest difference in
the loss and the gradients, and per overridden operator how many calls ran a kernel. With the
passthrough kernels (build_tests/gallery/passthrough: each calls ATen's own operator) the ratio
is the cost of the registration path alone. The figures are one machine's, from one run.

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
    parser.add_argument("--steps", type=int, default=10, help="steps per block (the first is not counted)")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds of an eager and a backend block")
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

    def block():
        times = []
        for _ in range(args.steps + 1):
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            result = step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return times[1:], result  # the first step after switching warms caches up

    for _ in range(3):
        step()  # warm-up: allocator, kernels loaded
    eager_times, backend_times, round_ratios = [], [], []
    for _ in range(args.rounds):
        eager, (eager_loss, eager_grads) = block()
        enable()
        registrations = len(registered())
        backend, (loss, grads) = block()
        counts = calls()
        disable()
        eager_times += eager
        backend_times += backend
        round_ratios.append(statistics.median(backend) / statistics.median(eager))
    eager_time, backend_time = statistics.median(eager_times), statistics.median(backend_times)
    print(f"enabled: {registrations} kernel registrations")
    grad_diff = max((g - e).abs().max().item() for g, e in zip(grads, eager_grads))
    print(f"device {device} ({torch.cuda.get_device_name() if device.type == 'cuda' else 'cpu'}), torch {torch.__version__}")
    print(f"median step ({args.rounds} rounds of {args.steps} steps each way): eager {eager_time * 1e3:.3f} ms, "
          f"backend {backend_time * 1e3:.3f} ms, ratio {backend_time / eager_time:.4f} "
          f"(per-round ratios {min(round_ratios):.4f} to {max(round_ratios):.4f})")
    print(f"loss: eager {eager_loss.item():.6f}, backend {loss.item():.6f}; largest gradient difference {grad_diff:.3g}")
    print("calls per operator (kernel, ATen inside kernels):")
    for line in counts:
        op, kernel, aten = line.split(" ")
        if int(kernel) or int(aten):
            print(f"  {op:20s} {kernel:>8s} {aten:>8s}")


if __name__ == "__main__":
    main()
