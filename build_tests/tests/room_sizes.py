#!/usr/bin/env python3
"""No room holds more than a quarter of the house (the project's house rules: small rooms, each
one target). The house is the project's own C++ (.cpp, .h, .cu) under generator/ and build_tests/,
without the tests and the galleries' kernels (test data); a room is a folder of generator/, of
build_tests/, or of build_tests/frontends/.

Prints each room's lines and share, largest first, and exits 1 when one is over the limit.
"""
import os
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 0.25
NOT_ROOMS = {"generator/tests", "build_tests/tests", "build_tests/gallery", "build_tests/frontends"}


def lines_under(folder):
    total = 0
    for here, _, names in os.walk(folder):
        for name in names:
            if name.endswith((".cpp", ".h", ".cu")):
                with open(os.path.join(here, name), errors="replace") as source:
                    total += sum(1 for _ in source)
    return total


rooms = {}
for parent in ["generator", "build_tests", "build_tests/frontends"]:
    for name in sorted(os.listdir(os.path.join(ROOT, parent))):
        room = f"{parent}/{name}"
        path = os.path.join(ROOT, room)
        if room in NOT_ROOMS:
            continue
        if os.path.isdir(path):
            rooms[room] = lines_under(path)
        elif name.endswith((".cpp", ".h", ".cu")):  # a file beside the rooms: the parent's own
            with open(path, errors="replace") as source:
                rooms[parent] = rooms.get(parent, 0) + sum(1 for _ in source)
house = sum(rooms.values())
over = []
for room, lines in sorted(rooms.items(), key=lambda item: -item[1]):
    share = lines / house if house else 0
    print(f"{room:32} {lines:6} lines  {100 * share:5.1f} %")
    if share > LIMIT:
        over.append(f"{room}: error: {lines} of the house's {house} lines ({100 * share:.1f} %); expected at most "
                    f"{100 * LIMIT:.0f} % in one room")
print("\n".join(over) if over else f"no room over {100 * LIMIT:.0f} % of the house's {house} lines")
sys.exit(1 if over else 0)
