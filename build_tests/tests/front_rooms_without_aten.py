#!/usr/bin/env python3
"""The planner, the agents and the command parse none of ATen's headers (issue 60: a first run in
minutes). They judge nothing and compute no tensor; what they need of libtorch (the CUDA device
count, the dispatcher's operator names, a backend's kind) comes through headers of the rooms below
that keep ATen in their .cpp files. Follows every quoted include of each of their files through
the project's include folders and reports the first include of ATen's or libtorch's headers each
reaches (c10's Device, through settings.h, and torch's version macros are allowed: 20 small headers).

Prints each, with the chain of includes that reaches it, and exits 1 when there is one.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRONT_ROOMS = ["build_tests/planner", "build_tests/agents", "build_tests/frontends/cli"]
INCLUDE_FOLDERS = [os.path.join(ROOT, "generator")] + [
    os.path.join(ROOT, "build_tests", room, "include")
    for room in ["runtime", "protocol", "worker", "supervisor", "planner", "agents", "frontends/cli"]]
ALLOWED = {"c10/core/Device.h", "torch/version.h", "torch/headeronly/version.h"}
QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ANGLED = re.compile(r'^\s*#\s*include\s+<((?:ATen|c10|torch)/[^>]+)>')


def resolve(name, including):
    for folder in [os.path.dirname(including)] + INCLUDE_FOLDERS:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return os.path.normpath(path)
    return None


def first_torch_include(path, chain, seen):
    """(chain, header) of the first ATen/libtorch header `path` reaches, or None."""
    if path in seen:
        return None
    seen.add(path)
    with open(path, errors="replace") as source:
        for number, line in enumerate(source, 1):
            here = chain + [f"{os.path.relpath(path, ROOT)}:{number}"]
            angled = ANGLED.match(line)
            if angled and angled.group(1) not in ALLOWED:
                return here, angled.group(1)
            quoted = QUOTED.match(line)
            if quoted:
                header = resolve(quoted.group(1), path)
                found = header and first_torch_include(header, here, seen)
                if found:
                    return found
    return None


errors = []
checked = 0
for room in FRONT_ROOMS:
    for folder, _, names in os.walk(os.path.join(ROOT, room)):
        for name in sorted(names):
            if not name.endswith((".h", ".cpp")):
                continue
            checked += 1
            found = first_torch_include(os.path.join(folder, name), [], set())
            if found:
                chain, header = found
                errors.append(f"{chain[0]}:1: error: {room} reaches <{header}> (through {' -> '.join(chain)}); "
                              "expected no ATen or libtorch header in the planner, the agents or the command "
                              "(ask a room below through a header without them)")
print("\n".join(errors) if errors else f"no file of the planner, the agents or the command reaches ATen ({checked} files)")
sys.exit(1 if errors else 0)
