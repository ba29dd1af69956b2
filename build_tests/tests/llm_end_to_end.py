#!/usr/bin/env python3
"""The generating backends (backendbench run --backend llm / kernel_agent) end to end, as a user
runs them, against a scripted model server on loopback (model_server.py: a real HTTP server
speaking the Anthropic and OpenAI APIs), one CTest entry per step (--step):

  arguments  a missing key, a kernel folder beside llm, bad numbers, options without llm: exit 2,
             one located error, nothing configured or written
  loop       one run, an operator per scenario: a model that fixes its kernel after feedback (add),
             one that never succeeds (abs: a fallback, an input mutation, its input unchanged: each
             caught and fed back), one that returns no code (neg), one whose kernel is
             tuned to the feedback cases it was shown (relu: caught by the hold-out), one behind
             a 500 and a 429 with retry-after (exp); its run folder and report read as a user
             would; then --replay of its cassette, offline: the same candidates and verdicts
  errors     a 401 stops the run's questions (OpenAI API); malformed JSON, and an answer slower
             than --llm-timeout, are errors of their round; a token budget stops a kernel_agent run
             cleanly
  best       best-of-N: every round runs, each correct candidate is timed, the fastest is kept,
             and its speed is fed back
  exfiltrate a model whose candidates #include a secret file in $HOME, one in the build folder and
             the build's own environment (/proc/self/environ), to read them back in the compiler's
             errors: the sandboxed build sees neither $HOME, the build folder nor the key, so no
             secret reaches the feedback,
             the results or the model; then a correct candidate passes
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--step", required=True, choices=["arguments", "loop", "errors", "best", "exfiltrate"])
parser.add_argument("--cli", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--source", required=True)
parser.add_argument("--chromium", default="")
args = parser.parse_args()
tree = os.path.join(args.work, "tree")
work = os.path.join(args.work, "llm")
failures = []
KEY = "sk-ant-test-4f9a1c2e7d"


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED: " + what)


def cli(*arguments, expect=None, environment=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(environment or {})
    done = subprocess.run([args.cli, *arguments], capture_output=True, text=True, env=env)
    print("$ backendbench " + " ".join(arguments) + f"  (exit {done.returncode})")
    print(done.stdout[-8000:], done.stderr[-4000:], sep="\n")
    if expect is not None:
        check(done.returncode == expect, f"{' '.join(arguments)}: exit {done.returncode}, expected {expect}")
    check(KEY not in done.stdout and KEY not in done.stderr, "the key is never printed")
    return done


class Server:
    """model_server.py with a script, on loopback, for the length of a `with`."""

    def __init__(self, name, script):
        self.folder = os.path.join(work, name + "_server")
        shutil.rmtree(self.folder, ignore_errors=True)
        os.makedirs(self.folder)
        with open(os.path.join(self.folder, "script.json"), "w") as f:
            json.dump(script, f)
        self.log = os.path.join(self.folder, "requests.jsonl")

    def __enter__(self):
        port_file = os.path.join(self.folder, "port")
        self.process = subprocess.Popen([sys.executable, os.path.join(args.source, "build_tests", "tests", "model_server.py"),
                                         "--script", os.path.join(self.folder, "script.json"), "--port-file", port_file,
                                         "--log", self.log])
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        self.port = open(port_file).read().strip()
        return self

    def __exit__(self, *unused):
        self.process.terminate()
        self.process.wait()

    def requests(self):
        return [json.loads(line) for line in open(self.log)] if os.path.exists(self.log) else []


def answer(code, words="Here is the kernel."):
    return {"text": words + "\n\n```cpp\n" + code + "\n```\nIt handles every dtype.\n"}


def kernel(folder, signature, body):
    return "#include <ATen/ATen.h>\n\nat::Tensor " + folder + "_kernel_impl(" + signature + ") {\n" + body + "\n}"


def shapes_of(arguments):
    return [[int(d) for d in shape.split(",") if d.strip()] for shape in re.findall(r"T\(\[([0-9, ]*)\]", arguments)]


def relu_tuned_to_feedback():
    """A relu right on the shapes its prompt showed (the feedback cases) and wrong elsewhere."""
    shown, held_out = set(), set()
    for suite in ["smoke", "edge"]:
        manifest = json.load(open(os.path.join(tree, "generated", suite, "suite.json")))
        for op in manifest["operators"]:
            if op["operator"] != "relu.default":
                continue
            for index, case in enumerate(op["cases"]):
                (shown if index % 2 == 0 else held_out).add(tuple(shapes_of(case["arguments"])[0]))
    check(bool(held_out - shown), "relu has a hold-out case of a shape the feedback cases lack (the scenario's premise)")
    known = ", ".join("{" + ", ".join(str(d) for d in shape) + "}" for shape in sorted(shown))
    body = ("  static const std::vector<std::vector<int64_t>> seen = {" + known + "};\n"
            "  for (const auto& shape : seen) {\n"
            "    if (self.sizes().vec() == shape) return at::clamp_min(self, 0);\n"
            "  }\n"
            "  return at::full_like(self, 7);")
    return kernel("relu__default", "const at::Tensor& self", body)


ADD = "const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha"
LOOP_SCRIPT = None


def loop_script():
    return {
        # Converges: alpha ignored, then fixed after the feedback names the failing cases.
        "add.Tensor": [answer(kernel("add__Tensor", ADD, "  return at::sub(self, other, -1);")),
                       answer(kernel("add__Tensor", ADD, "  return at::sub(self, other, -alpha);"), "Fixed: alpha is used now.")],
        # Never succeeds, wrong in ways the checks must catch: a fallback to the operator itself, then
        # a kernel that writes its read-only input, then its input unchanged.
        "abs.default": [answer(kernel("abs__default", "const at::Tensor& self", "  return at::abs(self);")),
                        answer(kernel("abs__default", "const at::Tensor& self",
                                      "  at::Tensor out = at::clone(self);\n  self.zero_();\n  return out;")),
                        answer(kernel("abs__default", "const at::Tensor& self", "  return self.clone();"))],
        # No code at all.
        "neg.default": [{"text": "I would negate each element, but I cannot write the code today."}],
        # Right only on the shapes it was shown.
        "relu.default": [answer(relu_tuned_to_feedback())],
        # Behind a server error and a rate limit, then right.
        "exp.default": [{"status": 500, "message": "overloaded"},
                        {"status": 429, "error_type": "rate_limit_error", "headers": {"retry-after": "1"}},
                        answer(kernel("exp__default", "const at::Tensor& self", "  return at::expm1(self) + 1;"))],
    }


def arguments():
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "must_not_exist")
    never_built = os.path.join(work, "never_built")
    local = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": KEY}
    cases = [
        ([], {}, r"^--backend: error: llm needs ANTHROPIC_API_KEY in the environment \(https://api\.anthropic\.com\); expected a key"),
        (["--llm-api", "openai", "--model", "m"], {}, r"^--backend: error: llm needs OPENAI_API_KEY in the environment"),
        (["--backend", "llm,directory"], local, r"^--backend: error: llm writes the kernels under test, and 'directory' is a kernel folder too"),
        (["--backend", "llm,kernel_agent"], local, r"^--backend: error: two generating backends"),
        (["--rounds", "0"], local, r"^--rounds: error: '0' is not a whole number from 1 to 1000"),
        (["--select", "fastest"], local, r"^--select: error: unknown selection 'fastest'; expected first"),
        (["--llm-api", "gemini"], local, r"^--llm-api: error: unknown API 'gemini'"),
        (["--llm-api", "openai"], local, r"^--model: error: no model given for --llm-api openai"),
        (["--model", "my-model", "--budget-usd", "2"], local, r"^--budget-usd: error: the prices of model 'my-model' are not known here"),
        (["--prices", "3"], local, r"^--prices: error: '3' is not two prices"),
        (["--language", "cuda", "--device", "cpu"], local, r"^--language: error: CUDA kernels run on CUDA tensors"),
        (["--replay", os.path.join(work, "no_cassette")], {}, r"^--replay: error: cassette '.*no_cassette' does not exist"),
    ]
    for extra, environment, pattern in cases:
        backend = [] if "--backend" in extra else ["--backend", "llm"]
        done = cli("run", "--suite", "smoke", "--out", out, "--build", never_built, *backend, *extra, expect=2, environment=environment)
        lines = done.stderr.strip().splitlines()
        check(len(lines) == 1, f"{extra}: one error line, got {len(lines)}")
        check(bool(lines) and re.search(pattern, lines[0]) is not None, f"{extra}: message matches {pattern}")
    done = cli("run", "--suite", "smoke", "--backend", "aten", "--record", "x", "--out", out, "--build", never_built, expect=2)
    check(done.stderr.startswith("--record: error: --record only applies to a model writing the kernels"), "--record needs llm")
    check(not os.path.exists(out) and not os.path.exists(never_built), "bad arguments configured and wrote nothing")


def read_run(results):
    run = json.load(open(os.path.join(results, "run.json")))
    return run, {op["operator"]: op for op in run["generation"]["operators"]}


def loop():
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    results, cassette = os.path.join(work, "results"), os.path.join(work, "cassette")
    common = ["run", "--suite", "smoke,edge", "--backend", "llm", "--ops", "add.Tensor,abs,neg,relu,exp", "--device", "cpu",
              "--rounds", "3", "--select", "first", "--concurrency", "2", "--build", tree, "-j", "2", "--salt", "0x11"]
    with Server("loop", loop_script()) as server:
        done = cli(*common, "--out", results, "--record", cassette, "--llm-retries", "2", expect=1,
                   environment={"ANTHROPIC_BASE_URL": "http://127.0.0.1:" + server.port, "ANTHROPIC_API_KEY": KEY})
        requests = server.requests()
    if not os.path.isfile(os.path.join(results, "run.json")):
        check(False, "the run wrote its results folder")
        return
    run, ops = read_run(results)
    generation = run["generation"]
    check(generation["backend"] == "llm" and generation["api"] == "anthropic", "run.json describes the generation")
    check(generation["feedback_salt"] != generation["holdout_salt"] == run["salt"], "the hold-out uses the run's salt, the feedback another")
    outcomes = {name: [a["outcome"] for a in op["attempts"]] for name, op in ops.items()}
    print("outcomes:", outcomes)
    check(outcomes.get("add.Tensor") == ["failed", "passed"], "add: wrong, then fixed after feedback (first correct wins)")
    check(outcomes.get("abs.default") == ["failed"] * 3, "abs: never correct, stopped at its 3 rounds")
    check(outcomes.get("neg.default") == ["no_code"] * 3, "neg: no code in 3 rounds")
    check(outcomes.get("relu.default") == ["passed"], "relu: correct on the feedback cases it was shown")
    check(outcomes.get("exp.default") == ["passed"], "exp: correct after the retries")
    exp_attempt = ops["exp.default"]["attempts"][0] if ops.get("exp.default") else {}
    check(exp_attempt.get("model_requests") == 3, "exp's answer took 3 requests (500, 429, 200)")
    # The hold-out: every case, other values.
    holdout = {name: op["holdout"] for name, op in ops.items()}
    check(holdout["add.Tensor"]["failed"] == 0 and holdout["add.Tensor"]["passed"] > 0, "add passes the hold-out")
    check(holdout["relu.default"]["failed"] > 0, "relu's tuned kernel is caught by the hold-out")
    check(ops["relu.default"]["correct_on_feedback"], "relu was correct on its feedback cases")
    check(holdout["abs.default"]["failed"] > 0 and holdout["neg.default"]["failed"] > 0, "abs and neg fail the hold-out")
    check("caught by the hold-out" in done.stdout, "the summary names the caught kernel")
    # The prompt gives what a kernel author needs; the feedback names what failed.
    first_add = open(os.path.join(results, "attempts", "add__Tensor", "w1_r1", "prompt.md")).read()
    for needed in ["Operator: add.Tensor", "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                   "at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha)",
                   "Device: cpu", "T([", "calling the operator itself", "Tensor(a!)", "view of one", "stream"]:
        check(needed in first_add, f"the first prompt has {needed!r}")
    second_add = open(os.path.join(results, "attempts", "add__Tensor", "w1_r2", "prompt.md")).read()
    check("failed " in second_add and "at::sub(self, other, -1)" in second_add and "expected" in second_add,
          "the second prompt has the failures (expected vs actual) and the previous file")
    abs_second = open(os.path.join(results, "attempts", "abs__default", "w1_r2", "prompt.md")).read()
    abs_third = open(os.path.join(results, "attempts", "abs__default", "w1_r3", "prompt.md")).read()
    check("falls back to ATen: it dispatches aten::abs" in abs_second, "the fallback is caught and fed back")
    check("is read-only in the schema but the kernel changed it" in abs_third, "the input mutation is caught and fed back")
    neg_second = open(os.path.join(results, "attempts", "neg__default", "w1_r2", "prompt.md")).read()
    check("no complete fenced code block" in neg_second, "no code is fed back as such")
    # The run folder keeps everything, and the kept kernels in the generated_kernels layout.
    attempt = os.path.join(results, "attempts", "add__Tensor", "w1_r1")
    for name in ["prompt.md", "answer.md", "response.json", "attempt.json", "build.log", "edge.verdicts.jsonl",
                 "kernel/add__Tensor/add__Tensor_implementation_1.cpp"]:
        check(os.path.isfile(os.path.join(attempt, name)), f"the attempt folder has {name}")
    check(os.path.isfile(os.path.join(results, "kernels", "add__Tensor", "add__Tensor_implementation_2.cpp")), "add's kept kernel")
    neg_kept = os.path.join(results, "kernels", "neg__default", "neg__default_implementation_1.cpp")
    check(os.path.isfile(neg_kept) and "not written yet" in open(neg_kept).read(), "neg's stand-in fails saying so")
    check(all(r["key_sent"] and r["key_length"] == len(KEY) for r in requests), "the key went in the header")
    for root, _, names in os.walk(results):
        for name in names:
            if name.endswith((".so",)):
                continue
            with open(os.path.join(root, name), errors="replace") as f:
                check(KEY not in f.read(), f"the key is not in {os.path.join(root, name)}")
    check(generation["input_tokens"] > 0 and all(op["wall_seconds"] > 0 for op in generation["operators"] if op["attempts"]),
          "tokens and wall time per operator")
    report = open(os.path.join(results, "report.html")).read()
    check("Kernels written by " in report and '"generation"' in report, "the report has the generation section")
    if args.chromium:
        dom = subprocess.run([args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                              "--virtual-time-budget=15000", "--dump-dom", "file://" + os.path.abspath(os.path.join(results, "report.html"))],
                             capture_output=True, text=True, timeout=180).stdout
        body = re.search(r"<body[^>]*>", dom)
        check(body is not None and "data-report-errors" not in body.group(0), "the report has no script errors")
        check('id="generation-table"' in dom and "Kernels written by llm" in dom, "the generation table is drawn")
        check(re.search(r"caught: \d+ of \d+ passed", dom) is not None, "the report marks the kernel the hold-out caught")
    # The kept kernels are a kernel folder like any other.
    again = os.path.join(work, "directory_results")
    done = cli("run", "--suite", "edge", "--backend", os.path.join(results, "kernels"), "--ops", "add.Tensor", "--no-timing",
               "--device", "cpu", "--build", tree, "-j", "2", "--out", again, expect=0)
    # Replay: no server, no key; the same candidates and verdicts.
    replayed = os.path.join(work, "replayed")
    # Without --salt: the cassette keeps the recorded run's.
    done = cli(*[a for a in common if a not in ("--salt", "0x11")], "--out", replayed, "--replay", cassette, expect=1)
    check("salt 0x0000000000000011" in done.stdout, "the replay draws with the recorded run's salt")
    if not os.path.isfile(os.path.join(replayed, "run.json")):
        check(False, "the replay wrote its results folder")
        return
    _, replay_ops = read_run(replayed)
    for name, op in ops.items():
        before = [(a["key"], a["outcome"], a["passed"], a["failed"]) for a in op["attempts"]]
        after = [(a["key"], a["outcome"], a["passed"], a["failed"]) for a in replay_ops[name]["attempts"]]
        check(sorted(before) == sorted(after), f"{name}: the replay's candidates and verdicts are the recording's")
        check(op["holdout"]["passed"] == replay_ops[name]["holdout"]["passed"], f"{name}: the same hold-out verdicts")


def errors():
    os.makedirs(work, exist_ok=True)
    # 401 on the OpenAI API: not retried, and nothing more is asked.
    results = os.path.join(work, "unauthorised")
    shutil.rmtree(results, ignore_errors=True)
    with Server("unauthorised", {"*": [{"status": 401, "error_type": "invalid_request_error",
                                        "message": "Incorrect API key provided: " + KEY}]}) as server:
        done = cli("run", "--suite", "edge", "--backend", "llm", "--llm-api", "openai", "--model", "scripted", "--ops", "neg,abs",
                   "--device", "cpu", "--no-timing", "--rounds", "3", "--concurrency", "1", "--build", tree, "-j", "2", "--out", results,
                   expect=1, environment={"OPENAI_BASE_URL": "http://127.0.0.1:" + server.port + "/v1", "OPENAI_API_KEY": KEY})
        check(len(server.requests()) == 1, f"one request after a 401, got {len(server.requests())}")
        check(server.requests()[0]["path"] == "/v1/chat/completions", "the OpenAI path")
    check("authentication failed" in done.stdout and "OPENAI_API_KEY" in done.stdout, "the 401 is named with its variable")
    if os.path.isfile(os.path.join(results, "run.json")):
        run, _ = read_run(results)
        check("authentication failed" in run["generation"]["stopped"], "run.json says why it stopped")
    # Malformed JSON is an error of that round; the next round is asked.
    results = os.path.join(work, "malformed")
    shutil.rmtree(results, ignore_errors=True)
    good = answer(kernel("neg__default", "const at::Tensor& self", "  return at::mul(self, -1);"))
    with Server("malformed", {"neg.default": [{"raw": "{\"content\": [tru"}, good]}) as server:
        done = cli("run", "--suite", "edge", "--backend", "llm", "--ops", "neg", "--device", "cpu", "--no-timing", "--rounds", "2",
                   "--select", "first", "--build", tree, "-j", "2", "--out", results, expect=0,
                   environment={"ANTHROPIC_BASE_URL": "http://127.0.0.1:" + server.port, "ANTHROPIC_API_KEY": KEY})
    if os.path.isfile(os.path.join(results, "run.json")):
        _, ops = read_run(results)
        attempts = ops["neg.default"]["attempts"]
        check([a["outcome"] for a in attempts] == ["model_error", "passed"], "malformed JSON, then a kernel")
        check("not JSON" in attempts[0]["message"], "the malformed answer is named")
    # An answer slower than --llm-timeout is that round's error; the next round is asked.
    results = os.path.join(work, "slow")
    shutil.rmtree(results, ignore_errors=True)
    with Server("slow", {"neg.default": [dict(good, delay=4), good]}) as server:
        done = cli("run", "--suite", "edge", "--backend", "llm", "--ops", "neg", "--device", "cpu", "--no-timing", "--rounds", "2",
                   "--select", "first", "--llm-timeout", "1", "--llm-retries", "0", "--build", tree, "-j", "2", "--out", results,
                   expect=0, environment={"ANTHROPIC_BASE_URL": "http://127.0.0.1:" + server.port, "ANTHROPIC_API_KEY": KEY})
    if os.path.isfile(os.path.join(results, "run.json")):
        _, ops = read_run(results)
        attempts = ops["neg.default"]["attempts"]
        check([a["outcome"] for a in attempts] == ["model_error", "passed"], "a timed-out answer, then a kernel")
        check("no answer within 1 s" in attempts[0]["message"], "the timeout is named")
    # A token budget stops a kernel_agent run before its next questions.
    results = os.path.join(work, "budget")
    shutil.rmtree(results, ignore_errors=True)
    wrong = answer(kernel("abs__default", "const at::Tensor& self", "  return self.clone();"))
    with Server("budget", {"*": [wrong]}) as server:
        done = cli("run", "--suite", "edge", "--backend", "kernel_agent", "--ops", "abs", "--device", "cpu", "--no-timing",
                   "--workers", "2", "--concurrency", "2", "--budget-tokens", "10", "--build", tree, "-j", "2", "--out", results,
                   expect=1, environment={"ANTHROPIC_BASE_URL": "http://127.0.0.1:" + server.port, "ANTHROPIC_API_KEY": KEY})
        asked = len(server.requests())
    # Each worker asks once at most: the second's first question comes after the first's answer
    # spent the budget when the machine is busy (once under the full suite), and is then not asked.
    check(1 <= asked <= 2, f"at most the two workers' first questions, then none: {asked} asked")
    if os.path.isfile(os.path.join(results, "run.json")):
        run, _ = read_run(results)
        check("token budget" in run["generation"]["stopped"], "run.json says the budget stopped it")


def best():
    os.makedirs(work, exist_ok=True)
    results = os.path.join(work, "best")
    shutil.rmtree(results, ignore_errors=True)
    fast = answer(kernel("relu__default", "const at::Tensor& self", "  return at::clamp_min(self, 0);"))
    slow = answer(kernel("relu__default", "const at::Tensor& self",
                         "  at::Tensor out = at::clamp_min(self, 0);\n"
                         "  for (int i = 0; i < 20; ++i) out = at::clamp_min(out, 0);  // the same answer, 21 times the work\n"
                         "  return out;"), "A slower one.")
    with Server("best", {"relu.default": [fast, slow]}) as server:
        cli("run", "--suite", "smoke", "--backend", "llm", "--ops", "relu", "--device", "cpu", "--rounds", "2", "--select", "best",
            "--build", tree, "-j", "2", "--out", results, expect=0,
            environment={"ANTHROPIC_BASE_URL": "http://127.0.0.1:" + server.port, "ANTHROPIC_API_KEY": KEY})
    if not os.path.isfile(os.path.join(results, "run.json")):
        check(False, "the run wrote its results folder")
        return
    _, ops = read_run(results)
    attempts = {a["key"]: a for a in ops["relu.default"]["attempts"]}
    check(set(attempts) == {"relu__default/w1_r1", "relu__default/w1_r2"}, "both rounds ran although the first was correct")
    speeds = [attempts[k].get("speedup") for k in sorted(attempts)]
    check(all(isinstance(v, float) for v in speeds), f"each correct candidate was timed: {speeds}")
    check(ops["relu.default"]["kept"] == "relu__default/w1_r1", "the faster candidate is kept")
    second = open(os.path.join(results, "attempts", "relu__default", "w1_r2", "prompt.md")).read()
    check(re.search(r"passed all \d+ of its cases\. It ran at [0-9.]+x ATen's speed", second) is not None, "its speed is fed back")


def exfiltrate():
    import tempfile
    os.makedirs(work, exist_ok=True)
    results = os.path.join(work, "exfiltrate")
    shutil.rmtree(results, ignore_errors=True)
    home = tempfile.mkdtemp(prefix="backendbench_home_")  # outside the build folder, as a user's is
    planted = "planted-home-secret-7c31e9"
    with open(os.path.join(home, "secret.h"), "w") as f:
        f.write(planted + " is_not_cpp;\n")
    reads_home = answer("#include \"" + os.path.join(home, "secret.h") + "\"\n" +
                        kernel("neg__default", "const at::Tensor& self", "  return at::mul(self, -1);"))
    # The build folder holds the run's logs and files, and earlier runs' results: hidden too.
    planted_build = "planted-build-secret-52d8a0"
    build_secret = os.path.join(tree, "planted_build_secret.h")
    with open(build_secret, "w") as f:
        f.write(planted_build + " is_not_cpp;\n")
    reads_build = answer("#include \"" + build_secret + "\"\n" +
                         kernel("neg__default", "const at::Tensor& self", "  return at::mul(self, -1);"))
    reads_environment = answer("#include \"/proc/self/environ\"\n" +
                               kernel("neg__default", "const at::Tensor& self", "  return at::mul(self, -1);"))
    good = answer(kernel("neg__default", "const at::Tensor& self", "  return at::mul(self, -1);"))
    try:
        with Server("exfiltrate", {"neg.default": [reads_home, reads_build, reads_environment, good]}) as server:
            cli("run", "--suite", "edge", "--backend", "llm", "--ops", "neg", "--device", "cpu", "--no-timing",
                "--rounds", "4", "--select", "first", "--build", tree, "-j", "2", "--out", results, expect=0,
                environment={"ANTHROPIC_BASE_URL": "http://127.0.0.1:" + server.port, "ANTHROPIC_API_KEY": KEY,
                             "HOME": home, "BACKENDBENCH_PLANTED_TOKEN": planted})
            sent = open(server.log).read() if os.path.exists(server.log) else ""
    finally:
        shutil.rmtree(home, ignore_errors=True)
        os.remove(build_secret)
    if not os.path.isfile(os.path.join(results, "run.json")):
        check(False, "the run wrote its results folder")
        return
    _, ops = read_run(results)
    outcomes = [a["outcome"] for a in ops["neg.default"]["attempts"]]
    # /proc/self/environ reads as empty to the compiler (its size is 0), so that candidate may build.
    check(outcomes[:2] == ["build_failed", "build_failed"] and outcomes[-1] == "passed",
          f"the $HOME and build folder reads fail to build, a kernel passes: {outcomes}")
    for secret in (KEY, planted, planted_build):
        check(secret not in sent, "no secret in what the model was sent")
        for root, _, names in os.walk(results):
            for name in names:
                if not name.endswith(".so"):
                    with open(os.path.join(root, name), errors="replace") as f:
                        check(secret not in f.read(), f"no secret in {os.path.join(root, name)}")
    second = open(os.path.join(results, "attempts", "neg__default", "w1_r2", "prompt.md")).read()
    # g++ says "No such file or directory", clang "file not found".
    missing = ("No such file", "file not found")
    check("secret.h" in second and any(m in second for m in missing), "the first build's error is fed back: the file is not there")
    third = open(os.path.join(results, "attempts", "neg__default", "w1_r3", "prompt.md")).read()
    check("planted_build_secret.h" in third and any(m in third for m in missing),
          "the second build's error is fed back: the build folder's file is not there")


{"arguments": arguments, "loop": loop, "errors": errors, "best": best, "exfiltrate": exfiltrate}[args.step]()
print(f"{len(failures)} failed checks" if failures else "all checks passed")
sys.exit(1 if failures else 0)
