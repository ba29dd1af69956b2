"""The model suite as a user runs it (python -m backendbench.models) on the installed package, and
its divergence report on outputs that differ in known places."""
import json

import pytest
import torch

from backendbench import models


def trial(calls):
    return models.Trial([torch.zeros(2)], 0.0, {}, [0.0], calls)


def test_the_first_call_whose_outputs_differ_is_named():
    eager = trial([("mm.default", [torch.ones(2, 2)]), ("relu.default", [torch.tensor([0.0, 1.0])]),
                   ("add.Tensor", [torch.tensor([1.0])])])
    backend = trial([("mm.default", [torch.ones(2, 2)]), ("relu.default", [torch.tensor([-0.01, 1.0])]),
                     ("add.Tensor", [torch.tensor([2.0])])])
    divergence = models.first_divergence(eager, backend, models.Tolerance())
    assert (divergence["call"], divergence["operator"]) == (1, "relu.default")
    assert divergence["max_abs_error"] == pytest.approx(0.01)


def test_differences_within_the_tolerance_and_equal_nans_are_not_divergence():
    eager = trial([("exp.default", [torch.tensor([1000.0, float("nan")])])])
    backend = trial([("exp.default", [torch.tensor([1000.05, float("nan")])])])
    assert models.first_divergence(eager, backend, models.Tolerance(rtol=1e-4)) is None
    assert models.first_divergence(eager, backend, models.Tolerance(rtol=1e-6))["call"] == 0


def test_a_model_that_takes_another_path_is_reported_at_the_first_other_operator():
    eager = trial([("mm.default", [torch.ones(1)]), ("relu.default", [torch.ones(1)])])
    backend = trial([("mm.default", [torch.ones(1)]), ("gelu.default", [torch.ones(1)])])
    divergence = models.first_divergence(eager, backend, models.Tolerance())
    assert divergence["operator"] == "gelu.default" and "another path" in divergence["reason"]


def test_gpt2_runs_unchanged_on_the_example_kernels_and_matches_eager(tmp_path, capsys):
    pytest.importorskip("transformers")
    assert models.main(["--model", "hf_gpt2", "--output", str(tmp_path), "--time-steps", "2"]) == 0
    report = json.loads((tmp_path / "hf_gpt2.json").read_text())
    assert report["matches"] and all(check["passed"] for check in report["checks"])
    # add and mul ran our kernels, and only operators with a registered kernel count kernel calls.
    kernel_calls = report["coverage"]["kernel_calls"]
    assert kernel_calls.get("add.Tensor", 0) > 0 and kernel_calls.get("mul.Tensor", 0) > 0
    registered = {line.split(" ")[0] for line in report["registered"]}
    assert set(kernel_calls) <= registered
    assert "verdict: matches eager" in capsys.readouterr().out
    assert (tmp_path / "hf_gpt2.xml").read_text().count("<testcase") == 4


def test_a_missing_model_library_is_a_skip_not_a_failure(monkeypatch, capsys):
    monkeypatch.setitem(models.MODELS, "hf_bert", models.MODELS["hf_bert"].__class__(
        **{**models.MODELS["hf_bert"].__dict__, "needs": "no_such_module_here"}))
    assert models.main(["--model", "hf_bert"]) == models.SKIPPED
    assert "pip install no_such_module_here" in capsys.readouterr().out


class TwoHeads(torch.nn.Module):
    """A model of the user's own: relu, add and mul inside, a tuple out."""

    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(8, 16)
        self.left, self.right = torch.nn.Linear(16, 2), torch.nn.Linear(16, 3)

    def forward(self, x):
        hidden = torch.relu(self.trunk(x))
        hidden = hidden * hidden + hidden
        return self.left(hidden), self.right(hidden)


def test_a_model_of_ones_own_is_compared_as_the_suite_compares_its_models():
    torch.manual_seed(3)
    model, x = TwoHeads(), torch.randn(4, 8)
    before = {name: p.clone() for name, p in model.state_dict().items()}
    report = models.compare(model, x, loss=lambda out: out[0].sum() + out[1].square().mean(), time_steps=1)
    assert report["model"] == "TwoHeads" and report["matches"]
    assert [check["name"] for check in report["checks"]] == ["forward_output", "loss", "gradients", "loss_curve"]
    assert report["checks"][2]["parameters"] == 6
    assert report["coverage"]["kernel_calls"]["relu.default"] == 1
    assert "verdict: matches eager" in models.format_report(report)
    # The weights are the model's own again afterwards (the loss curve trained a copy of them).
    assert all(torch.equal(before[name], p) for name, p in model.state_dict().items())


def test_an_op_library_is_run_in_a_model_and_its_wrong_kernel_named_alone(monkeypatch):
    from backendbench import op_libraries

    def table(module):  # a relu that lets values in (-0.05, 0) through, as gallery/model_divergence's does
        return {"relu.default": lambda x: torch.where(x > -0.05, x, torch.zeros_like(x))}
    fake = op_libraries.OpLibrary("fake_gems", "torch", "any", table, lambda package: [], "nothing")
    monkeypatch.setitem(op_libraries.LIBRARIES, "fake_gems", fake)
    monkeypatch.setattr(op_libraries, "_tables", {})
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    report = models.compare(model, torch.randn(32, 8), steps=2, time_steps=1, op_library="fake_gems")
    assert report["library"] == "op library fake_gems"
    assert not report["matches"]
    assert report["coverage"]["kernel_calls"].get("relu.default", 0) >= 1
    assert report["diverging_kernels"] == ["relu.default"]
    assert "relu.default" in report["first_divergence"]["reason"]
