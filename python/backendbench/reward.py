"""The reward API from Python: kernel sources in, verdicts out, for a training loop's reward.

    from backendbench.reward import RewardService

    with RewardService(suites="smoke,edge", device="cpu", command="build/backendbench") as service:
        reward = service.score("relu", source)            # one candidate
        rewards = service.score_batch(candidates)         # [{"op", "source", "language"}, ...], in order
        for reward in service.stream(candidates):         # as each is ready
            ...

Each reward is a dict: id, op, language, outcome (passed, failed, build_failed, error), correct,
reason (the first failed check and why, or the compiler's first error), failed_case,
build_errors, passed, failed, skipped, speedup over ATen (None when not timed) with speedup_low
and speedup_high (its 95 % interval), timed_cases, flags (suspect, overhead_dominated, ...:
how many timed cases raised each), seconds.

It drives one `backendbench reward` process (the C++ command; README, "The reward API"), which
builds each candidate alone in a sandboxed slot of one build folder and checks it with served test
executables, so calls share the build, the precompiled header and the kernel workers. Only the
standard library is used here.
"""
from __future__ import annotations

import itertools
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from typing import Any, Iterable, Iterator, Optional

__all__ = ["RewardService", "RewardServiceError"]


# A non-finite figure arrives as one of these strings (JSON has no infinity or NaN; the command's
# json_numbers.h): a float again, so that a reward's figures are numbers or None.
_NON_FINITE = {"Infinity", "-Infinity", "NaN"}
_FIGURES = ("speedup", "speedup_low", "speedup_high")


def _with_figures(reward: dict[str, Any]) -> dict[str, Any]:
    for key in _FIGURES:
        if isinstance(reward.get(key), str) and reward[key] in _NON_FINITE:
            reward[key] = float(reward[key])
    return reward


class RewardServiceError(RuntimeError):
    """The reward process ended, or never started; the message holds its last output."""


class RewardService:
    def __init__(self, suites: str = "smoke,edge", device: Optional[str] = None, cases: str = "holdout",
                 timing: Optional[bool] = None, concurrency: int = 2, salt: Optional[str] = None,
                 build: Optional[str] = None, command: Optional[str] = None, sandbox: bool = True,
                 extra_args: Iterable[str] = ()):
        """Starts `backendbench reward` (command: its path; default $BACKENDBENCH_CLI, else
        `backendbench` on PATH) with these options; its own output goes to `log_path`."""
        command = command or os.environ.get("BACKENDBENCH_CLI") or shutil.which("backendbench")
        if not command:
            raise RewardServiceError("no backendbench command: pass command=<build>/backendbench or set BACKENDBENCH_CLI")
        argv = [command, "reward", "--suite", suites, "--cases", cases, "--concurrency", str(concurrency)]
        if device:
            argv += ["--device", device]
        if timing is not None:
            argv.append("--timing" if timing else "--no-timing")
        if salt:
            argv += ["--salt", salt]
        if build:
            argv += ["--build", build]
        if not sandbox:
            argv.append("--no-sandbox")
        argv += list(extra_args)
        self._log = tempfile.NamedTemporaryFile(prefix="backendbench_reward_", suffix=".log", delete=False)
        self.log_path = self._log.name
        self._process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                         text=True, bufsize=1)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[str, queue.Queue] = {}  # our id -> where its reward goes
        self._ended = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # --- the three forms -------------------------------------------------------------------

    def score(self, op: str, source: str, language: str = "cpp") -> dict[str, Any]:
        """One candidate's reward."""
        return self.score_batch([{"op": op, "source": source, "language": language}])[0]

    def score_batch(self, candidates: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every candidate's reward, in the candidates' order (scored `concurrency` at once)."""
        rewards = {}
        items = list(candidates)
        for index, reward in self._scored(enumerate(items)):
            rewards[index] = reward
        return [rewards[index] for index in range(len(items))]

    def stream(self, candidates: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Each candidate's reward as soon as it is ready (not in the candidates' order); a
        candidate's own "id", if it has one, comes back in its reward."""
        for _, reward in self._scored(enumerate(candidates)):
            yield reward

    def close(self) -> int:
        """Ends the input and waits for the process; its exit status."""
        if self._process.stdin and not self._process.stdin.closed:
            try:
                self._process.stdin.close()
            except (BrokenPipeError, OSError):
                pass  # it ended first; its status and log say why
        status = self._process.wait()
        self._reader.join(timeout=10)
        self._log.close()
        return status

    def __enter__(self) -> "RewardService":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the pipe --------------------------------------------------------------------------

    def _scored(self, numbered: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[tuple[int, dict[str, Any]]]:
        answers: queue.Queue = queue.Queue()
        sent: dict[str, tuple[int, Any]] = {}  # our id -> (position, the caller's id)
        done_sending = threading.Event()

        def send() -> None:
            try:
                for position, candidate in numbered:
                    ours = f"py{next(self._ids)}"
                    with self._lock:
                        self._waiting[ours] = answers
                        sent[ours] = (position, candidate.get("id"))
                    line = {"id": ours, "op": candidate["op"], "source": candidate["source"],
                            "language": candidate.get("language", "cpp")}
                    self._process.stdin.write(json.dumps(line) + "\n")
                    self._process.stdin.flush()
            except (BrokenPipeError, OSError):
                pass  # the process ended: the reader reports it
            finally:
                done_sending.set()
                answers.put(None)  # wakes the loop below to look at what is still owed

        threading.Thread(target=send, daemon=True).start()
        received = 0
        while True:
            reward = answers.get()
            if reward is not None and "__ended__" in reward:
                raise RewardServiceError("backendbench reward ended before answering every candidate:\n" + self._tail())
            if reward is None:
                if done_sending.is_set() and received == len(sent):
                    return
                if self._ended and received < len(sent):
                    raise RewardServiceError("backendbench reward ended before answering every candidate:\n" + self._tail())
                continue
            with self._lock:
                position, theirs = sent[reward["id"]]
                self._waiting.pop(reward["id"], None)
            reward["id"] = theirs
            received += 1
            yield position, reward
            if done_sending.is_set() and received == len(sent):
                return

    def _read(self) -> None:
        for line in self._process.stdout:
            try:
                reward = _with_figures(json.loads(line))
            except json.JSONDecodeError:
                continue
            with self._lock:
                target = self._waiting.get(reward.get("id"))
            if target is not None:
                target.put(reward)
        with self._lock:  # the process ended: whoever still waits learns it
            self._ended = True
            for target in list(self._waiting.values()):
                target.put({"__ended__": True})

    def _tail(self) -> str:
        try:
            with open(self.log_path) as handle:
                return "".join(handle.readlines()[-20:])
        except OSError:
            return ""
