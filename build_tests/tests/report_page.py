"""The report as a person sees it (issue 31): headless Chromium opens a results folder's
report.html, runs its scripts and draws it; the test then reads the page Chromium drew (its DOM)
and keeps a screenshot of the first screen, whose path it prints.

`look_at_report` checks what the first screen must answer: which kernels are wrong and the first
reason for each, with a command that runs the failed case again; which are slow; a card per
kernel; skipped tests with their reason; the run's facts as a table; no script errors; every
chart drawn that the page decided to draw, and the heatmap's legend. Used by cli_end_to_end.py.
"""
import html
import os
import re
import subprocess

WIDTH, HEIGHT = 1400, 900  # the first screen


def _browser(chromium, height):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--virtual-time-budget=15000", f"--window-size={WIDTH},{height}"]


def _texts(dom, pattern):
    """The text inside each match of `pattern` (a regex whose group 1 is the element's inner HTML)."""
    return [html.unescape(re.sub(r"<[^>]+>", " ", inner)) for inner in re.findall(pattern, dom, re.S)]


def run_kernels(results):
    """What a results folder holds, read from its verdicts.jsonl: the (operator, backend) kernels
    (aten left out when kernels ran), the wrong ones, and the skipped tests' reasons."""
    import json
    verdicts = [json.loads(line) for line in open(os.path.join(results, "verdicts.jsonl")) if line.strip()]
    ran = [v for v in verdicts if v["status"] != "skipped"]
    kernels_ran = any(v["backend"] != "aten" for v in ran)
    kernels = {(v["operator"], v["backend"]) for v in ran if not (kernels_ran and v["backend"] == "aten")}
    wrong = {(v["operator"], v["backend"]) for v in ran if v["status"] == "failed" and (v["operator"], v["backend"]) in kernels}
    skipped = {v["skip_reason"] for v in verdicts if v["status"] == "skipped"}
    return kernels, wrong, skipped


def look_at_report(check, chromium, page, shot, *, kernels, wrong=(), slow=None, skipped=(), groups=()):
    """Checks the drawn page against what the run holds; returns the DOM ("" without Chromium).

    kernels: how many kernel cards; wrong: (operator, backend) of each wrong kernel; slow: whether
    a slow kernel is listed (None: not checked); skipped: reasons that must be listed; groups: the
    score cards' labels."""
    name = os.path.basename(shot)
    check(bool(chromium), f"{name}: Chromium found (scripts/install-deps.sh installs Debian's chromium)")
    if not chromium:
        return ""
    done = subprocess.run(_browser(chromium, HEIGHT) + ["--dump-dom", "file://" + page], capture_output=True, text=True,
                          timeout=180)
    dom = done.stdout
    body = re.search(r"<body[^>]*>", dom)
    body = body.group(0) if body else ""
    print(f"{name}: body tag: {body or dom[:300]}")
    if not body:
        print(done.stderr[-1500:])
    attribute = lambda key: (re.search(key + r'="([^"]*)"', body) or [None, None])[1]  # noqa: E731
    check(body and attribute("data-report-errors") is None, f"{name}: no script errors ({attribute('data-report-errors')})")
    drawn = (attribute("data-plots-drawn") or "").split()
    check(attribute("data-plots-rendered") == str(len(drawn)), f"{name}: every chart it chose to draw rendered ({drawn})")
    check(dom.count('class="main-svg"') >= len(drawn), f"{name}: plotly drew its SVG for each chart")
    if "correctness" in drawn:
        check("cases passed" in dom, f"{name}: the correctness heatmap has its legend")

    title = _texts(dom, r"<h1>(.*?)</h1>")
    check(title and title[0].startswith("backendbench: ") and "backendbench run" not in title[0] and " --" not in title[0],
          f"{name}: the title says what ran, not the raw command ({title})")
    verdict = _texts(dom, r'<div class="verdict[^"]*" id="verdict">(.*?)</div>')
    expected = (f"{len(wrong)} of {kernels} kernel{'s' if kernels != 1 else ''} wrong" if wrong else
                "the kernel is correct" if kernels == 1 else f"all {kernels} kernels correct")
    check(verdict and verdict[0].startswith(expected), f"{name}: the verdict line starts '{expected}' ({verdict})")
    cards = re.findall(r'<div class="card (wrong|slow|good)">', dom)
    check(len(cards) == kernels, f"{name}: a card per kernel ({len(cards)} of {kernels})")
    check(cards.count("wrong") == len(wrong), f"{name}: the wrong kernels' cards say so")

    first_screen = (attribute("data-first-screen") or "").split()
    print(f"{name}: first screen: {first_screen}")
    check("verdict" in first_screen, f"{name}: the verdict line is on the first screen")
    rows = _texts(dom, r'<tr class="wrong-kernel">(.*?)</tr>')
    for op, backend in wrong:
        row = [r for r in rows if f"{op} · {backend}" in r]
        check(row, f"{name}: {op} {backend} is listed as wrong")
        check(row and ("--gtest_filter=" in row[0] or "--benchmark_filter=" in row[0] or "backendbench run --suite" in row[0]),
              f"{name}: {op} {backend} has a command that runs its failed case again")
    if wrong:
        check("wrong-section" in first_screen, f"{name}: the wrong kernels are on the first screen")
    else:
        check('id="wrong-section" class="hidden"' in dom, f"{name}: no wrong-kernels section without wrong kernels")
    if slow is not None:
        listed = bool(re.search(r'<tr class="slow-kernel">', dom))
        check(listed == slow, f"{name}: slow kernels {'listed' if slow else 'not listed'}")
    skipped_table = "".join(_texts(dom, r'<table id="skipped">(.*?)</table>'))
    for reason in skipped:
        check(reason in skipped_table, f"{name}: the skipped tests' reason '{reason}' is listed")
    if not skipped:
        check('id="skipped-section" class="hidden"' in dom, f"{name}: no skipped section without skipped tests")
    labels = [html.unescape(label) for label in re.findall(r'<div class="score"><div><b>(.*?)</b>', dom)]
    for label in groups:
        check(label in labels, f"{name}: a score card for {label} ({labels})")
    facts = "".join(_texts(dom, r'<table class="facts">(.*?)</table>'))
    check("salt" in facts and "build folder" in facts, f"{name}: the run's facts as a table")
    shown = re.sub(r"<script[^>]*>.*?</script>", "", dom, flags=re.S)
    check('"schema"' not in shown, f"{name}: no raw JSON on the page")

    os.makedirs(os.path.dirname(shot), exist_ok=True)
    if os.path.exists(shot):
        os.remove(shot)
    subprocess.run(_browser(chromium, HEIGHT) + ["--screenshot=" + shot, "file://" + page], capture_output=True, timeout=180)
    check(os.path.isfile(shot) and os.path.getsize(shot) > 20_000, f"{name}: screenshot of the first screen")
    print(f"screenshot: {shot}")
    return dom
