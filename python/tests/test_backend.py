"""The installed package as a user runs it: a model of torch.nn modules, unchanged, with and
without the backend; enable/disable/the context manager; include/exclude; results that fail a
kernel; torch.ops.load_library of the same library."""
import json
import pathlib
import warnings

import pytest
import torch

import backendbench


@pytest.fixture(autouse=True)
def nothing_enabled_after():
    yield
    backendbench.disable()


class Mlp(torch.nn.Module):
    """relu, mul, add and div in the forward (the example kernels' operators)."""

    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(16, 32)
        self.second = torch.nn.Linear(32, 4)

    def forward(self, x):
        hidden = torch.relu(self.first(x))
        hidden = hidden * hidden + hidden
        return self.second(hidden) / 2.0


def train(steps=5):
    """Loss per SGD step, and the first step's output and gradients, from a fixed seed."""
    torch.manual_seed(7)
    model = Mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, target = torch.randn(64, 16), torch.randn(64, 4)
    losses, first = [], None
    for step in range(steps):
        optimizer.zero_grad()
        output = model(x)
        loss = torch.nn.functional.mse_loss(output, target)
        loss.backward()
        if step == 0:
            first = (output.detach().clone(), [p.grad.clone() for p in model.parameters()])
        losses.append(loss.item())
        optimizer.step()
    return losses, first


def test_the_library_holds_the_example_kernels():
    held = backendbench.kernels()
    assert any(line.startswith("relu.default impl1 CPU") for line in held), held
    assert any(line.startswith("add_.Tensor impl1 CPU") for line in held), "in-place variants are served too"


def test_a_model_trains_the_same_on_the_kernels_and_they_run():
    eager_losses, (eager_output, eager_grads) = train()
    with backendbench.enabled():
        losses, (output, grads) = train()
        counts = backendbench.calls()
    for op in ("relu.default", "mul.Tensor", "add.Tensor", "div.Tensor"):
        assert counts[op][0] > 0, f"{op} never ran its kernel: {counts}"
    torch.testing.assert_close(output, eager_output, rtol=1e-5, atol=1e-6)
    for got, want in zip(grads, eager_grads):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert losses == pytest.approx(eager_losses, rel=1e-5)


def test_disable_removes_every_registration():
    backendbench.enable(include="relu")
    assert backendbench.registered()
    torch.relu(torch.randn(8))
    assert backendbench.calls()["relu.default"][0] == 1
    assert backendbench.disable() is True
    assert backendbench.registered() == []
    assert backendbench.disable() is False


def test_include_and_exclude():
    only = backendbench.enable(include=["relu.default"])
    assert [line.split(" ")[0] for line in only] == ["relu.default"] * len(only)
    without = backendbench.enable(exclude="relu")
    assert without and not any(line.startswith("relu.") for line in without)  # relu_ is an operator of its own


def test_a_kernel_failing_in_the_results_is_left_out_unless_forced(tmp_path: pathlib.Path):
    verdicts = tmp_path / "edge" / "relu.default" / "impl1.verdicts.jsonl"
    verdicts.parent.mkdir(parents=True)
    verdicts.write_text(json.dumps({"schema": "backendbench-verdict", "version": 1, "suite": "edge",
                                    "operator": "relu.default", "case": "f32_8_nan", "source": {"file": "e.txt", "line": 9},
                                    "backend": "impl1", "status": "failed",
                                    "errors": ["output 0: 1 of 8 values differ"]}) + "\n")
    with pytest.warns(UserWarning, match="edge f32_8_nan: output 0: 1 of 8 values differ; not registered"):
        lines = backendbench.enable(include="relu.default", results=str(tmp_path), check=False)
    assert not any("on CPU" in line for line in lines)
    with pytest.warns(UserWarning, match="registered all the same"):
        lines = backendbench.enable(include="relu.default", results=str(tmp_path), force=True, check=False)
    assert any(line.startswith("relu.default impl1 on CPU") for line in lines)


def test_torch_ops_load_library_gives_the_same_operators():
    torch.ops.load_library(backendbench.library_path())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.ops.backendbench.enable(["relu"], [], "", False, True)
    assert any(line.startswith("relu.default impl1 on CPU") for line in torch.ops.backendbench.registered())


def test_coverage_names_what_a_model_dispatched_and_what_ran_kernels():
    torch.manual_seed(0)
    model, x = Mlp(), torch.randn(8, 16)
    with backendbench.enabled():
        report = backendbench.coverage(lambda: model(x).sum().backward())
    assert report.calls["relu.default"] == 1 and report.kernel_calls["relu.default"] == 1
    assert report.calls["addmm.default"] >= 2 and "addmm.default" not in report.kernel_calls  # no kernel: ATen's
    assert 0 < report.share < 1
    assert "relu.default" in report.table() and "calls ran a kernel" in report.table()


def test_last_check_says_what_enable_checked_before_registering(tmp_path: pathlib.Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backendbench.enable(include="relu", results=str(tmp_path))  # no results: relu's kernels are checked
    checked, seconds = backendbench.last_check()
    assert checked >= 1 and seconds > 0
    backendbench.disable()
    assert backendbench.last_check() == (0, 0.0)
