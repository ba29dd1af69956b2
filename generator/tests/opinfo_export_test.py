#!/usr/bin/env python3
"""generator/opinfo/export_opinfo.py writes the same file every time: operators that return
uninitialised memory (empty_strided, empty_like, new_empty) are exported with all their samples,
whatever the allocator hands back. Before, the check that two calls agree compared that memory,
and three exports of these operators held 6, 6 and 8 cases."""
import pathlib
import subprocess
import sys
import tempfile

script = pathlib.Path(__file__).resolve().parents[1] / "opinfo" / "export_opinfo.py"
operators = ["empty_strided", "empty_like", "new_empty"]
with tempfile.TemporaryDirectory() as folder:
    texts = []
    for i in range(2):
        output = pathlib.Path(folder) / f"opinfo_{i}.txt"
        subprocess.run([sys.executable, str(script), "--output", str(output), "--ops", ",".join(operators), "--dtypes", "f32"],
                       check=True, capture_output=True, text=True)
        texts.append(output.read_text())
failures = []
if texts[0] != texts[1]:
    failures.append("two exports differ:\n" + texts[0][:2000] + "\n---\n" + texts[1][:2000])
for operator in operators:
    lines = texts[0].split("\n")
    start = lines.index(f"Operator: aten.{operator}.default") if f"Operator: aten.{operator}.default" in lines else None
    cases = 0
    if start is not None:
        for line in lines[start + 1:]:
            if not line.startswith("cnt: "):
                break
            cases += 1
    if cases == 0:
        failures.append(f"aten.{operator}.default has no cases")
    else:
        print(f"ok: aten.{operator}.default: {cases} cases")
if "not deterministic" in texts[0]:
    failures.append("samples were left out as not deterministic: " +
                    next(line for line in texts[0].split("\n") if "not deterministic" in line))
for failure in failures:
    print("FAILED:", failure)
sys.exit(1 if failures else 0)
