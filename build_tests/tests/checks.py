"""The checks of the scripts in build_tests/tests that say each one: `check` prints "ok: " or
"FAILED: " and what it checked, and keeps a failed one in `failures`, which the script's exit
status reads. Imported by the scripts beside it (their folder is on sys.path when they run)."""
failures = []


def check(condition, what):
    print(("ok: " if condition else "FAILED: ") + what)
    if not condition:
        failures.append(what)
