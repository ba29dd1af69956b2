"""The model suite: real models, unchanged, run with and without the backend and compared.

    python -m backendbench.models --model hf_bert                 # small config, CPU
    python -m backendbench.models --model timm_resnet --size full --device cuda
    python -m backendbench.models --list
    backendbench.models.compare(my_model, x, loss=...)               # a model of your own

Each model comes from a library people use (timm, Hugging Face transformers, torchvision), built
from its config with seeded random weights (nothing is downloaded). One run:

1. eager ATen: the first training step's forward output, loss and every parameter's gradient,
   then `--steps` SGD steps (the loss curve), each ATen call's outputs recorded in order;
2. the same under the backend (`enabled()`), with its coverage: which ATen operators the step
   dispatched and how many calls ran our kernels;
3. compared under the tolerance below; when anything diverges, the first ATen call whose outputs
   differ, then each kernel that ran enabled alone, to name the kernels that diverge by themselves;
4. the step time (forward, backward, optimizer step) with and without the backend, interleaved.

Tolerance (documented in the README): an element passes when |backend - eager| <= atol + rtol *
|eager|, with rtol = 1e-4 and atol = 1e-5 in float32 (`--rtol`, `--atol`), for the output, the
loss, every gradient, every step's loss, and each recorded ATen call.

Exit status: 0 when everything matches, 1 when something diverges (or, with
`--expect-divergence OP`, 0 only when the run diverges and OP's kernel alone diverges), 77 when the
model's library is not installed (CTest counts it as skipped). `--output DIR` writes
`<model>.json` and JUnit `<model>.xml` there.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import dataclasses
import importlib.util
import json
import math
import pathlib
import statistics
import sys
import time
import warnings
import xml.etree.ElementTree as ElementTree
from typing import Any, Callable, Optional

import torch
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

import backendbench

SKIPPED = 77  # CTest's SKIP_RETURN_CODE in the model entries


@dataclasses.dataclass
class Model:
    """A model of the suite: the library it needs, how to build it from its config with the
    current seed ("small" for CI's CPU, "full" for the real configuration), a batch, and a loss."""

    name: str
    needs: str
    build: Callable[[str], torch.nn.Module]
    batch: Callable[[str, torch.device], dict[str, torch.Tensor]]
    forward: Callable[[torch.nn.Module, dict[str, torch.Tensor]], torch.Tensor]
    loss: Callable[[torch.Tensor, dict[str, torch.Tensor]], torch.Tensor]


def _images(size: str, device: torch.device, classes: int) -> dict[str, torch.Tensor]:
    count, side = (2, 64) if size == "small" else (8, 224)
    return {"x": torch.randn(count, 3, side, side, device=device),
            "labels": torch.randint(0, classes, (count,), device=device)}


def _tokens(size: str, device: torch.device, vocabulary: int) -> dict[str, torch.Tensor]:
    count, length = (2, 16) if size == "small" else (8, 128)
    return {"ids": torch.randint(0, vocabulary, (count, length), device=device),
            "labels": torch.randint(0, 3, (count,), device=device)}


def _classification_loss(logits: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(logits, batch["labels"])


def _next_token_loss(logits: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), batch["ids"][:, 1:].flatten())


def _timm_resnet(size: str) -> torch.nn.Module:
    import timm
    return timm.create_model("resnet10t" if size == "small" else "resnet50", pretrained=False,
                             num_classes=10 if size == "small" else 1000)


def _torchvision_resnet(size: str) -> torch.nn.Module:
    import torchvision
    return torchvision.models.resnet18(num_classes=10) if size == "small" else torchvision.models.resnet50()


_SMALL_VOCABULARY = 512


def _bert(size: str) -> torch.nn.Module:
    import transformers
    small = dict(vocab_size=_SMALL_VOCABULARY, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=128, max_position_embeddings=64)
    config = transformers.BertConfig(**(small if size == "small" else {}), num_labels=3, hidden_dropout_prob=0.0,
                                     attention_probs_dropout_prob=0.0, attn_implementation="eager")
    return transformers.BertForSequenceClassification(config)


def _gpt2(size: str) -> torch.nn.Module:
    import transformers
    small = dict(vocab_size=_SMALL_VOCABULARY, n_positions=64, n_embd=64, n_layer=2, n_head=2)
    config = transformers.GPT2Config(**(small if size == "small" else {}), resid_pdrop=0.0, embd_pdrop=0.0,
                                     attn_pdrop=0.0, attn_implementation="eager")
    return transformers.GPT2LMHeadModel(config)


def _vocabulary(size: str) -> int:
    return _SMALL_VOCABULARY if size == "small" else 30522  # BERT's; GPT-2's is larger


MODELS = {model.name: model for model in [
    Model("timm_resnet", "timm", _timm_resnet,
          lambda size, device: _images(size, device, 10 if size == "small" else 1000),
          lambda model, batch: model(batch["x"]), _classification_loss),
    Model("torchvision_resnet", "torchvision", _torchvision_resnet,
          lambda size, device: _images(size, device, 10 if size == "small" else 1000),
          lambda model, batch: model(batch["x"]), _classification_loss),
    Model("hf_bert", "transformers", _bert,
          lambda size, device: _tokens(size, device, _vocabulary(size)),
          lambda model, batch: model(input_ids=batch["ids"]).logits, _classification_loss),
    Model("hf_gpt2", "transformers", _gpt2,
          lambda size, device: _tokens(size, device, _vocabulary(size)),
          lambda model, batch: model(input_ids=batch["ids"]).logits, _next_token_loss),
]}


class _RecordOutputs(TorchDispatchMode):
    """Every ATen call below autograd, in order: its overload and its tensor outputs (on the CPU)."""

    def __init__(self, limit_bytes: int = 2 << 30):
        super().__init__()
        self.calls: list[tuple[str, list[torch.Tensor]]] = []
        self.bytes, self.limit_bytes, self.truncated = 0, limit_bytes, False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = backendbench._overload_name(func)
        tensors = [t for t in (result if isinstance(result, (tuple, list)) else [result]) if isinstance(t, torch.Tensor)]
        size = sum(t.numel() * t.element_size() for t in tensors)
        if self.bytes + size > self.limit_bytes:
            self.truncated = True
        else:
            self.bytes += size
            self.calls.append((name, [t.detach().to("cpu", copy=True) for t in tensors]))
        return result


@dataclasses.dataclass
class Trial:
    """One run of a model: the first step's output, loss and gradients, the loss curve, and the ATen
    calls of the first step (all of them unless their outputs passed the recorder's limit)."""

    output: list[torch.Tensor]  # the forward output's tensors (a tuple, dict or model output flattened)
    loss: float
    gradients: dict[str, torch.Tensor]
    losses: list[float]
    calls: list[tuple[str, list[torch.Tensor]]]
    calls_truncated: bool = False


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _train_step(model: Model, module: torch.nn.Module, batch: dict[str, torch.Tensor],
                optimizer: torch.optim.Optimizer) -> torch.Tensor:
    """One training step: forward, loss, backward, optimizer step; returns the loss."""
    optimizer.zero_grad(set_to_none=True)
    loss = model.loss(model.forward(module, batch), batch)
    loss.backward()
    optimizer.step()
    return loss.detach()


def _first_step(model: Model, module: torch.nn.Module, batch: dict[str, torch.Tensor],
                recorder: Optional[_RecordOutputs] = None):
    module.zero_grad(set_to_none=True)
    with recorder or contextlib.nullcontext():
        output = model.forward(module, batch)
        loss = model.loss(output, batch)
        loss.backward()
    gradients = {name: p.grad.detach().clone() for name, p in module.named_parameters() if p.grad is not None}
    outputs = [t.detach().clone() for t in pytree.tree_leaves(output) if isinstance(t, torch.Tensor)]
    return outputs, float(loss.detach()), gradients


def _trial(model: Model, module: torch.nn.Module, initial: dict[str, torch.Tensor], batch: dict[str, torch.Tensor],
           steps: int) -> Trial:
    module.load_state_dict(initial)
    recorder = _RecordOutputs()
    output, loss, gradients = _first_step(model, module, batch, recorder)
    module.load_state_dict(initial)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9)
    losses = [float(_train_step(model, module, batch, optimizer)) for _ in range(steps)]
    return Trial(output, loss, gradients, losses, recorder.calls, recorder.truncated)


@dataclasses.dataclass
class Tolerance:
    rtol: float = 1e-4
    atol: float = 1e-5

    def error(self, expected: torch.Tensor, actual: torch.Tensor) -> tuple[bool, float]:
        """(within tolerance, max abs error); shapes or dtypes that differ never match."""
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            return False, math.inf
        if expected.numel() == 0:
            return True, 0.0
        if not (expected.is_floating_point() or expected.is_complex()):
            return bool(torch.equal(expected, actual)), float((expected != actual).sum())
        e, a = expected.double(), actual.double()
        difference = (e - a).abs().nan_to_num(nan=math.inf)
        same_nan = e.isnan() & a.isnan()
        ok = bool(((difference <= self.atol + self.rtol * e.abs()) | same_nan | (e == a)).all())
        return ok, float(difference.masked_fill(same_nan, 0).max())


def _compare(eager: Trial, backend: Trial, tolerance: Tolerance) -> list[dict[str, Any]]:
    """One entry per comparison: name, passed, max_abs_error, and what was worst."""
    checks = []
    results = [tolerance.error(e, a) for e, a in zip(eager.output, backend.output)]
    ok = len(eager.output) == len(backend.output) and all(passed for passed, _ in results)
    error = max((error for _, error in results), default=0.0)
    checks.append({"name": "forward_output", "passed": ok, "max_abs_error": error})
    ok, error = tolerance.error(torch.tensor(eager.loss), torch.tensor(backend.loss))
    checks.append({"name": "loss", "passed": ok, "max_abs_error": error, "eager": eager.loss, "backend": backend.loss})
    worst, worst_error, failing = "", 0.0, []
    for name, gradient in eager.gradients.items():
        other = backend.gradients.get(name)
        ok, error = tolerance.error(gradient, other) if other is not None else (False, math.inf)
        if not ok:
            failing.append(name)
        if error >= worst_error:
            worst, worst_error = name, error
    missing = sorted(set(backend.gradients) - set(eager.gradients))
    checks.append({"name": "gradients", "passed": not failing and not missing, "max_abs_error": worst_error,
                   "parameters": len(eager.gradients), "worst_parameter": worst, "failing": failing[:10] + missing[:10]})
    ok, error = tolerance.error(torch.tensor(eager.losses), torch.tensor(backend.losses))
    checks.append({"name": "loss_curve", "passed": ok, "max_abs_error": error, "eager": eager.losses,
                   "backend": backend.losses})
    return checks


def first_divergence(eager: Trial, backend: Trial, tolerance: Tolerance) -> Optional[dict[str, Any]]:
    """The first ATen call of the first step whose outputs differ (or whose operator differs)."""
    for index, ((name, expected), (other_name, actual)) in enumerate(zip(eager.calls, backend.calls)):
        if name != other_name:
            return {"call": index, "operator": other_name, "reason": f"the backend called {other_name} where eager "
                    f"called {name} (the model took another path)"}
        for position, (e, a) in enumerate(zip(expected, actual)):
            ok, error = tolerance.error(e, a)
            if not ok:
                return {"call": index, "operator": name, "output": position, "max_abs_error": error,
                        "reason": f"call {index} ({name}), output {position}: max abs error {error:.3g}"}
    if len(eager.calls) != len(backend.calls):
        return {"call": min(len(eager.calls), len(backend.calls)), "operator": "",
                "reason": f"eager made {len(eager.calls)} ATen calls, the backend {len(backend.calls)}"}
    return None


def _first_step_diverges(model: Model, module: torch.nn.Module, initial: dict[str, torch.Tensor],
                         batch: dict[str, torch.Tensor], eager: Trial, tolerance: Tolerance) -> bool:
    module.load_state_dict(initial)
    output, loss, gradients = _first_step(model, module, batch)
    trial = Trial(output, loss, gradients, eager.losses, [])
    return not all(check["passed"] for check in _compare(eager, trial, tolerance)[:3])


def run(name: str, size: str = "small", device: str = "cpu", steps: int = 4, tolerance: Tolerance = Tolerance(),
        include=None, exclude=None, results: Optional[str] = None, force: bool = False,
        time_steps: int = 5, op_library: Optional[str] = None) -> dict[str, Any]:
    """Runs one model of the suite with and without the backend; returns the report (see the
    module's doc; format_report() prints it)."""
    model = MODELS[name]
    device_ = torch.device(device)
    torch.manual_seed(0)
    module = model.build(size).to(device_).train()
    batch = model.batch(size, device_)
    report = _run(model, module, batch, device_, steps, tolerance,
                  _backend(op_library, device_, exclude, results, force), include, time_steps)
    report["size"] = size
    return report


def compare(module: torch.nn.Module, *inputs: Any, loss: Optional[Callable[[Any], torch.Tensor]] = None,
            steps: int = 4, tolerance: Tolerance = Tolerance(), include=None, exclude=None,
            results: Optional[str] = None, force: bool = False, time_steps: int = 5,
            name: Optional[str] = None, op_library: Optional[str] = None) -> dict[str, Any]:
    """Your own model, as the suite runs its models: `module(*inputs)` with and without the
    backend, compared (output, loss, gradients, loss curve), with its coverage, the first ATen call
    that diverges and the kernels that diverge alone, and step times. `loss` turns the output into
    a scalar (default: the mean of its squares). The module's weights are restored afterwards.

        report = backendbench.models.compare(model, x, loss=lambda out: criterion(out, y))
        print(backendbench.models.format_report(report))
    """
    to_scalar = loss or (lambda output: output.float().square().mean())
    model = Model(name or type(module).__name__, "torch", lambda size: module, lambda size, device: {},
                  lambda m, batch: m(*inputs), lambda output, batch: to_scalar(output))
    parameter = next(module.parameters(), None)
    device = parameter.device if parameter is not None else torch.device("cpu")
    saved = copy.deepcopy(module.state_dict())
    try:
        report = _run(model, module, {}, device, steps, tolerance,
                      _backend(op_library, device, exclude, results, force), include, time_steps)
    finally:
        module.load_state_dict(saved)
    report["size"] = "as given"
    return report


class _OurKernels:
    """The backend library's kernels (backendbench.enable), chosen by their results."""

    def __init__(self, exclude, results: Optional[str], force: bool):
        self.exclude, self.results, self.force = exclude, results, force

    def name(self) -> str:
        return backendbench.library_path()

    def enabled(self, include):
        return backendbench.enabled(include, self.exclude, self.results, self.force)

    def coverage(self, run: Callable[[], Any]) -> backendbench.Coverage:
        return backendbench.coverage(run)


class _OpLibraryKernels:
    """A Python op library's table (op_libraries.py: FlagGems, ...) registered with PyTorch the way
    flag_gems.enable() registers it (torch.library at the device's dispatch key), each callable
    wrapped to count its calls, so that one overload can be enabled alone."""

    def __init__(self, name: str, device: torch.device, exclude):
        from backendbench import op_libraries
        self.library = name
        self.table = op_libraries.implementations(name)  # Unavailable says why it cannot run here
        self.key = "CUDA" if device.type == "cuda" else "CPU"
        self.exclude = backendbench._filters(exclude)
        self.calls: collections.Counter = collections.Counter()

    def name(self) -> str:
        return f"op library {self.library}"

    def _chosen(self, include) -> list[str]:
        wanted = backendbench._filters(include)
        def picked(op: str, filters) -> bool:
            return any(op == name or op.split(".")[0] == name for name in filters)
        return sorted(op for op in self.table
                      if (not wanted or picked(op, wanted)) and not (self.exclude and picked(op, self.exclude)))

    @contextlib.contextmanager
    def enabled(self, include):
        library = torch.library.Library("aten", "IMPL")
        registered = []
        try:
            for op in self._chosen(include):
                function = self.table[op]
                def counted(*args, __op=op, __function=function, **kwargs):
                    self.calls[__op] += 1
                    return __function(*args, **kwargs)
                try:
                    library.impl(op[:-len(".default")] if op.endswith(".default") else op, counted, self.key)
                except RuntimeError as error:  # an overload this torch lacks, or one it refuses here
                    warnings.warn(f"{self.library}: {op} not registered: {' '.join(str(error).split())[:200]}")
                    continue
                registered.append(f"{op} {self.library} on {self.key}")
            yield registered
        finally:
            library._destroy()

    def coverage(self, run: Callable[[], Any]) -> backendbench.Coverage:
        before = collections.Counter(self.calls)
        with backendbench._RecordOperators() as recorder:
            run()
        ran = {op: self.calls[op] - before[op] for op in self.calls if self.calls[op] - before[op]}
        return backendbench.Coverage(dict(recorder.counts), ran)


def _backend(op_library: Optional[str], device: torch.device, exclude, results: Optional[str], force: bool):
    return _OpLibraryKernels(op_library, device, exclude) if op_library else _OurKernels(exclude, results, force)


def _run(model: Model, module: torch.nn.Module, batch: dict[str, torch.Tensor], device: torch.device, steps: int,
         tolerance: Tolerance, kernels, include, time_steps: int) -> dict[str, Any]:
    initial = copy.deepcopy(module.state_dict())
    eager = _trial(model, module, initial, batch, steps)
    with kernels.enabled(include) as registered:
        module.load_state_dict(initial)
        coverage = kernels.coverage(lambda: _first_step(model, module, batch))
        backend = _trial(model, module, initial, batch, steps)
    checks = _compare(eager, backend, tolerance)
    matches = all(check["passed"] for check in checks)

    report: dict[str, Any] = {
        "model": model.name, "device": str(device), "library": kernels.name(),
        "registered": registered, "tolerance": dataclasses.asdict(tolerance), "steps": steps,
        "matches": matches, "checks": checks,
        "coverage": {"calls": coverage.calls, "kernel_calls": coverage.kernel_calls, "share": coverage.share},
        "coverage_table": coverage.table(),
    }
    if not matches:
        report["first_divergence"] = first_divergence(eager, backend, tolerance)
        report["calls_truncated"] = eager.calls_truncated or backend.calls_truncated
        # Which kernels diverge on their own: each one that ran, enabled alone.
        alone = []
        for op in sorted(coverage.kernel_calls):
            with kernels.enabled([op]):
                if _first_step_diverges(model, module, initial, batch, eager, tolerance):
                    alone.append(op)
        report["diverging_kernels"] = alone

    report["step_ms"] = _step_times(model, module, initial, batch, device, time_steps, kernels, include)
    module.load_state_dict(initial)
    return report


def _step_times(model, module, initial, batch, device, count, kernels, include) -> dict[str, float]:
    """Median training-step time with and without the backend: three rounds, each `count` eager
    steps then `count` backend steps (the first step of each block not counted), so drift hits both."""
    module.load_state_dict(initial)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.0)  # the weights stay put: every step is alike

    def steps() -> list[float]:
        seconds = []
        for _ in range(count + 1):
            _synchronize(device)
            start = time.perf_counter()
            _train_step(model, module, batch, optimizer)
            _synchronize(device)
            seconds.append(time.perf_counter() - start)
        return seconds[1:]

    samples = {"eager": [], "backend": []}
    for _ in range(3):
        samples["eager"] += steps()
        with kernels.enabled(include):
            samples["backend"] += steps()
    eager_ms, backend_ms = (1e3 * statistics.median(samples[key]) for key in ("eager", "backend"))
    return {"eager": eager_ms, "backend": backend_ms, "ratio": backend_ms / eager_ms, "samples": 3 * count}


def format_report(report: dict[str, Any]) -> str:
    lines = [f"model {report['model']} ({report['size']} config) on {report['device']}, "
             f"library {report['library']}"]
    lines += [f"  registered: {line}" for line in report["registered"]] or ["  registered: nothing"]
    tolerance = report["tolerance"]
    lines.append(f"  tolerance: |backend - eager| <= {tolerance['atol']:g} + {tolerance['rtol']:g} * |eager|")
    for check in report["checks"]:
        detail = f"max abs error {check['max_abs_error']:.3g}"
        if check["name"] == "gradients":
            detail += f" over {check['parameters']} parameters (worst: {check['worst_parameter']})"
            if check["failing"]:
                detail += f"; failing: {', '.join(check['failing'])}"
        if check["name"] == "loss_curve":
            detail += f"; eager {['%.5f' % v for v in check['eager']]} backend {['%.5f' % v for v in check['backend']]}"
        lines.append(f"  {check['name']:15s} {'ok  ' if check['passed'] else 'FAIL'} {detail}")
    lines += ["  coverage (the first training step, forward and backward):"]
    lines += ["    " + line for line in report["coverage_table"].splitlines()]
    if not report["matches"]:
        divergence = report["first_divergence"]
        unseen = " (recording stopped at 2 GiB of outputs)" if report["calls_truncated"] else ""
        lines.append(f"  first divergence: {divergence['reason'] if divergence else 'none among the recorded calls' + unseen}")
        alone = report["diverging_kernels"]
        lines.append(f"  kernels that diverge enabled alone: {', '.join(alone) if alone else 'none (only together)'}")
    step = report["step_ms"]
    lines.append(f"  step time (median of {step['samples']}, alternating): eager {step['eager']:.2f} ms, "
                 f"backend {step['backend']:.2f} ms ({step['ratio']:.3f}x)")
    lines.append(f"  verdict: {'matches eager' if report['matches'] else 'DIVERGES from eager'}")
    return "\n".join(lines)


def _write_results(report: dict[str, Any], directory: pathlib.Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{report['model']}.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    suite = ElementTree.Element("testsuite", name=f"model/{report['model']}", tests=str(len(report["checks"])),
                                failures=str(sum(not c["passed"] for c in report["checks"])))
    for check in report["checks"]:
        case = ElementTree.SubElement(suite, "testcase", name=check["name"], classname=f"model.{report['model']}")
        properties = ElementTree.SubElement(case, "properties")
        ElementTree.SubElement(properties, "property", name="max_abs_error", value=f"{check['max_abs_error']:.6g}")
        if not check["passed"]:
            divergence = report.get("first_divergence") or {}
            ElementTree.SubElement(case, "failure", message=divergence.get("reason", check["name"] + " differs"))
    ElementTree.ElementTree(suite).write(directory / f"{report['model']}.xml", encoding="unicode", xml_declaration=True)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backendbench.models", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), help="the model to run")
    parser.add_argument("--list", action="store_true", help="list the models and the library each needs")
    parser.add_argument("--size", choices=["small", "full"], default="small")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=4, help="SGD steps of the loss curve")
    parser.add_argument("--rtol", type=float, default=Tolerance.rtol)
    parser.add_argument("--atol", type=float, default=Tolerance.atol)
    parser.add_argument("--include", action="append", help="operators to enable (default: every kernel)")
    parser.add_argument("--exclude", action="append", help="operators to leave to ATen")
    parser.add_argument("--force", action="store_true", help="register kernels that fail their own tests too")
    parser.add_argument("--op-library", help="a Python op library's kernels instead of the backend library's "
                        "(op_libraries.py: flag_gems, torch_decomp)")
    parser.add_argument("--library", help="a backend library other than the installed package's "
                                          "(a C++ build's libbackendbench_<name>.so)")
    parser.add_argument("--results", help="the verdicts folder that chooses each operator's kernel "
                                          "(default $BACKENDBENCH_RESULTS; none: each kernel is checked first)")
    parser.add_argument("--output", help="folder for the report: <model>.json and JUnit <model>.xml")
    parser.add_argument("--time-steps", type=int, default=5, help="steps per timed block (3 blocks each way)")
    parser.add_argument("--expect-divergence", metavar="OP",
                        help="succeed only when the model diverges and OP's kernel diverges alone")
    args = parser.parse_args(argv)
    if args.list:
        for model in MODELS.values():
            print(f"{model.name:20s} needs {model.needs}")
        return 0
    if not args.model:
        parser.error("--model is required (or --list)")
    model = MODELS[args.model]
    if importlib.util.find_spec(model.needs) is None:
        print(f"{args.model}: skipped: the model needs {model.needs}, which is not installed "
              f"(pip install {model.needs})")
        return SKIPPED
    if args.library:
        backendbench.use_library(args.library)
    report = run(args.model, args.size, args.device, args.steps, Tolerance(args.rtol, args.atol), args.include,
                 args.exclude, args.results, args.force, args.time_steps, args.op_library)
    print(format_report(report))
    if args.output:
        _write_results(report, pathlib.Path(args.output))
    if args.expect_divergence:
        expected = args.expect_divergence
        # relu names relu.default and its in-place and out= siblings (relu_.default, relu.out).
        found = not report["matches"] and any(op == expected or op.split(".")[0].rstrip("_") == expected
                                              for op in report.get("diverging_kernels", []))
        print(f"  expected divergence in {expected}: {'found' if found else 'NOT found'}")
        return 0 if found else 1
    return 0 if report["matches"] else 1


if __name__ == "__main__":
    sys.exit(main())
