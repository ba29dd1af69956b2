"""scripts/flag_gems_table.py: FlagGems' labels read as its conf/operators.yaml writes them, and the
table written from a build's verdict files."""
import importlib.util
import json
import pathlib

import pytest

pytest.importorskip("yaml")
_SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "flag_gems_table.py"
_spec = importlib.util.spec_from_file_location("flag_gems_table", _SCRIPT)
table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table)

LABELS = """
ops:
  - id: tril
    for:
      - tril
    labels: [aten, KernelGen]
    stages:
      - beta: '5.0'
      - stable: '5.3'
  - id: flip
    for:
      - filp
    labels: [aten, pointwise]
    stages:
      - stable: '2.1'
  - id: add
    for:
      - add.Tensor
    labels: [aten]
    stages:
      - stable: '1.0'
  - id: bucket_sort_topk
    for:
      - None
    labels: [fused]
"""


def verdict(op, case, status, checks=(), errors=(), timing=None):
    return json.dumps({"backend": "flag_gems", "operator": op, "suite": "torchbench", "case": case,
                       "status": status, "frontend": "bench" if timing else "tests", "arguments": "((T([4], f16),), {})",
                       "checks": [{"check": c, "message": m, "passed": False} for c, m in checks],
                       "errors": list(errors), "timing": timing})


def test_labels_name_overloads_and_an_entry_misspelling_its_operator_is_found_by_its_id(tmp_path):
    (tmp_path / "operators.yaml").write_text(LABELS)
    labels = table.read_labels(tmp_path / "operators.yaml")
    assert labels["tril.default"] == {"kernel_gen": True, "stage": "beta 5.0 → stable 5.3", "ids": ["tril"]}
    assert labels["flip.default"]["kernel_gen"] is False  # its `for` says `filp`
    assert labels["add.Tensor"]["stage"] == "stable 1.0"
    assert "None.default" not in labels


def test_a_file_without_an_ops_list_is_one_located_error(tmp_path):
    (tmp_path / "operators.yaml").write_text("exclude: [mm]\n")
    with pytest.raises(SystemExit, match=r"operators.yaml:1:1: error: no 'ops' list"):
        table.read_labels(tmp_path / "operators.yaml")


def test_the_table_counts_each_case_once_and_the_summary_splits_by_label(tmp_path):
    (tmp_path / "operators.yaml").write_text(LABELS)
    results = tmp_path / "results" / "torchbench"
    (results / "tril.default").mkdir(parents=True)
    (results / "add.Tensor").mkdir()
    (results / "tril.default" / "flag_gems.verdicts.jsonl").write_text("\n".join([
        verdict("tril.default", "a", "passed"), verdict("tril.default", "b", "passed"),
        verdict("tril.default", "a", "passed", timing={"speedup": 2.0}),
        verdict("tril.default", "b", "passed", timing={"speedup": 0.5})]) + "\n")
    (results / "add.Tensor" / "flag_gems.verdicts.jsonl").write_text("\n".join([
        verdict("add.Tensor", "a", "passed"),
        verdict("add.Tensor", "b", "failed", errors=["x threw: a Python exception: ValueError: no"])]) + "\n")
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "m.txt").write_text("Operator: aten.add.Tensor\ncnt: 7, ((T([4], f16),), {})\ncnt: 3, (...)\n")
    rows = {r["operator"]: r for r in table.tabulate(tmp_path / "results", table.read_labels(tmp_path / "operators.yaml"),
                                                     "2", traces)}
    assert (rows["tril.default"]["cases"], rows["tril.default"]["failed"]) == (2, 0)
    assert rows["tril.default"]["speedup"] == "1.000"  # geomean of 2.0 and 0.5
    assert (rows["add.Tensor"]["failed"], rows["add.Tensor"]["torchbench_uses"]) == (1, 10)
    assert rows["add.Tensor"]["first_failure"] == "ValueError: no"
    assert "--ops add.Tensor" in rows["add.Tensor"]["reproduce"] and "--topn 2" in rows["add.Tensor"]["reproduce"]
    assert table.summary(list(rows.values()))[:2] == [
        "KernelGen-labelled: 1 of 1 operators reached pass every case here",
        "other labelled: 0 of 1 operators reached pass every case here"]
