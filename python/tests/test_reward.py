"""The reward client's reading of a reward line (python/backendbench/reward.py): a non-finite
figure arrives as "Infinity", "-Infinity" or "NaN" (JSON has none) and is a float again."""
import json
import math

from backendbench import reward


def test_non_finite_figures_are_floats_again_and_other_fields_are_left_as_they_are():
    line = json.dumps({"id": "1", "speedup": "Infinity", "speedup_low": "NaN", "speedup_high": "-Infinity",
                       "reason": "NaN", "failed_case": "Infinity"})
    got = reward._with_figures(json.loads(line))
    assert got["speedup"] == math.inf
    assert math.isnan(got["speedup_low"])
    assert got["speedup_high"] == -math.inf
    assert got["reason"] == "NaN" and got["failed_case"] == "Infinity"  # text stays text


def test_finite_and_absent_figures_are_unchanged():
    got = reward._with_figures({"id": "2", "speedup": 1.5, "speedup_low": None})
    assert got == {"id": "2", "speedup": 1.5, "speedup_low": None}
