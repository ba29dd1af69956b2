#!/usr/bin/env python3
"""The project's libraries and executables read and write JSON text through language/json_text.h,
so that nlohmann-json's lexer, parser and serializer are instantiated in one translation unit
(json_text.cpp) instead of in every file that calls json::parse or dump(). Tests and the gallery
may call nlohmann-json directly.

Prints each direct call, with its file and line, and exits 1 when there is one.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDERS = ["generator", "build_tests", "python"]
SKIPPED = {"tests", "gallery", "fuzz"}  # folders whose files may call nlohmann-json directly
OWNER = os.path.join("generator", "language", "json_text.cpp")
DIRECT = re.compile(r"\bjson::parse\s*\(|\.dump\s*\(")
errors = []
checked = 0
for top in FOLDERS:
    for folder, subfolders, names in os.walk(os.path.join(ROOT, top)):
        subfolders[:] = [name for name in subfolders if name not in SKIPPED]
        for name in sorted(names):
            path = os.path.join(folder, name)
            if not name.endswith((".h", ".cpp")) or os.path.relpath(path, ROOT) == OWNER:
                continue
            checked += 1
            with open(path, errors="replace") as source:
                for number, line in enumerate(source, 1):
                    code = line.split("//", 1)[0]
                    match = DIRECT.search(code)
                    if match:
                        errors.append(f"{os.path.relpath(path, ROOT)}:{number}:{match.start() + 1}: error: calls nlohmann-json's "
                                      f"{'parser' if 'parse' in match.group(0) else 'serializer'} directly; expected "
                                      "json_text::parse, parse_or_discarded, dump or dump_replacing_invalid_utf8 (language/json_text.h)")
print("\n".join(errors) if errors else f"no library or executable calls nlohmann-json's parser or serializer directly ({checked} files)")
sys.exit(1 if errors else 0)
