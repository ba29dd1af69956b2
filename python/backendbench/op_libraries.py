"""Python op libraries as backends: every operator a library implements, each its own backend.

A library is one entry of LIBRARIES: the module to import and a function that returns the
library's own table of what it registers (overload name -> callable). FlagGems is the first:
its `_FULL_CONFIG`, the table `flag_gems.enable()` registers with PyTorch, read as it is (no
hand-copied map), rows whose condition is false on this machine left out.

To add a library, write a function `table(module) -> dict[str, callable]` (keys: overloads such
as "add.Tensor", or base names meaning ".default") and add an `OpLibrary` to LIBRARIES; then
select it with `-DBACKENDBENCH_OP_LIBRARIES=<name>` or `backendbench run --backend <name>`.

    python -m backendbench.op_libraries --list flag_gems --output flag_gems.txt

writes the listing the build reads (language/op_library_listing.h): the operators it registers
and, where it cannot run here, why. The listing is read from the library's source when the
library installed here cannot be imported (FlagGems on a machine without a GPU), so its CTest
entries exist everywhere and are skipped with that reason.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import importlib.util
import pathlib
import sys
from typing import Callable, Dict, List, Optional


class Unavailable(Exception):
    """The library cannot run on this machine (not installed, or no device it supports)."""


@dataclasses.dataclass(frozen=True)
class OpLibrary:
    name: str  # the backend's name: CTest label, benchmark name, `--backend`
    module: str  # what to import
    device: str  # cuda or cpu: where its kernels run
    table: Callable[[object], Dict[str, Callable]]  # the imported module -> overload -> callable
    source_table: Callable[[pathlib.Path], List[str]]  # the package folder -> overloads, without importing
    install: str  # how a user gets it


def _overload(name: str) -> str:
    return name if "." in name else name + ".default"


def _flag_gems_table(module) -> Dict[str, Callable]:
    table = {}
    for row in module._FULL_CONFIG:
        if not row or len(row) < 2:
            continue
        name, function, *rest = row
        condition = rest[0] if rest and callable(rest[0]) else None
        if condition is not None and not condition():
            continue  # the row's own condition: not registered on this machine
        table.setdefault(_overload(name), function)
    return table


def _flag_gems_source_table(package: pathlib.Path) -> List[str]:
    tree = ast.parse((package / "__init__.py").read_text())
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(getattr(target, "id", None) == "_FULL_CONFIG" for target in targets):
            names = []
            for row in node.value.elts:
                if isinstance(row, ast.Tuple) and row.elts and isinstance(row.elts[0], ast.Constant):
                    names.append(_overload(row.elts[0].value))
            return names
    raise Unavailable(f"{package}/__init__.py has no _FULL_CONFIG table")


def _decomposition_table(module) -> Dict[str, Callable]:
    table = {}
    for op, function in module.decomposition_table.items():
        namespace, _, name = str(op).partition(".")  # aten.add.Tensor
        if namespace == "aten":
            table[_overload(name)] = function
    return table


def _decomposition_source_table(package: pathlib.Path) -> List[str]:
    raise Unavailable("torch._decomp comes with torch")


LIBRARIES: Dict[str, OpLibrary] = {
    "flag_gems": OpLibrary(
        name="flag_gems",
        module="flag_gems",
        device="cuda",
        table=_flag_gems_table,
        source_table=_flag_gems_source_table,
        install="pip install --no-deps flag-gems (its pinned torch and numpy would replace yours)",
    ),
    # PyTorch's own decompositions (what torch.compile lowers operators into) as a library: each
    # operator written in other ATen operators, on any device. A second library of a different
    # kind, and one that runs where there is no GPU.
    "torch_decomp": OpLibrary(
        name="torch_decomp",
        module="torch._decomp",
        device="any",
        table=_decomposition_table,
        source_table=_decomposition_source_table,
        install="it comes with torch",
    ),
}

_tables: Dict[str, Dict[str, Callable]] = {}


def library(name: str) -> OpLibrary:
    if name not in LIBRARIES:
        raise KeyError(f"no op library '{name}'; expected one of {', '.join(sorted(LIBRARIES))}")
    return LIBRARIES[name]


def implementations(name: str) -> Dict[str, Callable]:
    """The library's table on this machine; raises Unavailable with the reason it cannot run."""
    if name not in _tables:
        entry = library(name)
        if importlib.util.find_spec(entry.module) is None:
            raise Unavailable(f"{entry.module} is not installed ({entry.install})")
        try:
            module = importlib.import_module(entry.module)
        except Exception as error:  # the library's own import decides whether it runs here
            why = " ".join(str(error).split())  # one line: the listing's header holds it
            raise Unavailable(f"importing {entry.module} raised {type(error).__name__}: {why}") from None
        _tables[name] = entry.table(module)
    return _tables[name]


def implementation(name: str, op: str) -> Callable:
    """The library's callable for one overload (add.Tensor); Unavailable when it has none here."""
    table = implementations(name)
    if op not in table:
        raise Unavailable(f"{name} registers no {op} on this machine")
    return table[op]


def listing(name: str) -> str:
    """The listing the build reads: header lines, then one overload per line."""
    entry = library(name)
    lines = [f"# op library {name} (module {entry.module})", f"# device: {entry.device}"]
    try:
        operators = sorted(implementations(name))
    except Unavailable as why:
        lines.append(f"# unavailable: {why}")
        spec = importlib.util.find_spec(entry.module)
        operators = sorted(set(entry.source_table(pathlib.Path(spec.origin).parent))) if spec and spec.origin else []
    return "\n".join(lines + operators) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backendbench.op_libraries", description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", metavar="NAME", required=True, help="the library whose listing to write")
    parser.add_argument("--output", help="where to write it (default: stdout)")
    arguments = parser.parse_args(argv)
    try:
        text = listing(arguments.list)
    except KeyError as error:
        print(f"--list: error: {error.args[0]}", file=sys.stderr)
        return 2
    if arguments.output:
        path = pathlib.Path(arguments.output)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:  # written only when changed
            temporary = path.with_suffix(path.suffix + ".partial")
            temporary.write_text(text)
            temporary.replace(path)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
