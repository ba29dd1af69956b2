#!/usr/bin/env python3
"""Each room is one CMake target with an explicit source list (the project's house rules, as
Abseil's absl_cc_library): no CMake file of the generator or the harness collects the project's
own sources with file(GLOB), and every .cpp file under a room's folder is named in a CMake file,
so a file nobody listed cannot sit unbuilt beside the ones that are. Kernel folders, traces and
specifications are data, globbed on purpose (cmake/BackendBenchSuite.cmake), and are not looked at.

Prints each problem with its file and line, and exits 1 when there is one.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The folders whose .cpp files are the project's own sources, and the CMake files that list them.
ROOMS = ["generator", "build_tests/runtime", "build_tests/protocol", "build_tests/worker", "build_tests/supervisor", "build_tests/planner",
         "build_tests/agents", "build_tests/frontends", "build_tests/python"]
CMAKE_FILES = ["CMakeLists.txt", "generator/CMakeLists.txt", "generator/fuzz/CMakeLists.txt", "build_tests/CMakeLists.txt",
               "build_tests/tests/CMakeLists.txt"]
# Where the suites' functions name the two front-end sources every suite compiles; its globs are
# of kernel folders (data), so it is read for names only.
NAMES_ONLY = ["cmake/BackendBenchSuite.cmake"]
GLOB = re.compile(r"file\s*\(\s*GLOB(_RECURSE)?\b[^)]*\.(cpp|cc|cu|h)\b", re.IGNORECASE | re.DOTALL)

problems = []
listed = ""
for name in CMAKE_FILES + NAMES_ONLY:
    path = os.path.join(ROOT, name)
    if not os.path.exists(path):
        continue
    text = open(path).read()
    listed += text
    if name in NAMES_ONLY:
        continue
    for match in GLOB.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        problems.append(f"{name}:{line}:1: error: file(GLOB) collects sources; expected an explicit source list")
for room in ROOMS:
    for folder, _, names in os.walk(os.path.join(ROOT, room)):
        if os.sep + "tests" in folder[len(ROOT):] or os.sep + "fuzz" in folder[len(ROOT):]:
            continue
        for file_name in sorted(names):
            if not file_name.endswith(".cpp"):
                continue
            relative = os.path.relpath(os.path.join(folder, file_name), ROOT)
            # As a CMake file names it: from its own folder (build_tests/, generator/) or the top.
            below = relative.split("/", 1)[1]
            if below in listed or relative in listed:
                continue
            problems.append(f"{relative}:1:1: error: no CMake file names this source; expected it in its room's "
                            f"target's source list (build_tests/CMakeLists.txt or generator/CMakeLists.txt)")
print("\n".join(problems) if problems else f"every room's sources are listed by name ({len(ROOMS)} rooms checked)")
sys.exit(1 if problems else 0)
