"""Run a candidate's code against a list of checks, each check isolated, in two sandboxed
processes: one holds the code, the other the checks and their verdicts (envs/sandbox/harness).

A check is an expression compared with an expected value (a docstring example, `assert f(1) == 2`)
or statements that pass when they raise nothing. A check that raises, or runs past its own time
limit, fails alone; the others still run.

    >>> run = run_checks("def inc(x):\\n    return x + 1\\n", [Check("inc(1)", "inc(1)", "2")])
    >>> [r.passed for r in run.results]
    [True]
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files

from envs.sandbox.probe import sandbox_plan
from envs.sandbox.process import Sandboxed, SandboxResult


@dataclass(frozen=True)
class Check:
    """One test. `expected` None: run `source` as statements, pass if nothing raises. Otherwise
    evaluate `source` and compare with `expected` (`approx`: floats within 1e-6)."""

    label: str
    source: str
    expected: str | None = None
    setup: str = ""
    approx: bool = False


@dataclass(frozen=True)
class CheckResult:
    check: Check
    passed: bool
    got: str | None = None  # repr of the value, when it was compared
    error: str | None = None  # exception and the last traceback lines, or a timeout


@dataclass(frozen=True)
class CheckRun:
    results: tuple[CheckResult, ...]
    load_error: str | None  # the code itself failed (syntax, import, exception at load)
    sandbox: SandboxResult  # the checking process
    code_process: SandboxResult | None = None  # the candidate's, when it ran

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)


# What each sandbox runs: main.py imports its side of the harness (envs/sandbox/harness/).
CODE_SIDE = "from harness.code_side import main\nmain()\n"
CHECKS_SIDE = "from harness.checks_side import main\nmain()\n"
MODULES = {  # the modules each side needs
    "code": ("__init__.py", "wire.py", "code_side.py"),
    "checks": ("__init__.py", "wire.py", "proxy.py", "checks_side.py"),
}


@functools.cache
def harness_files(side: str) -> dict[str, str]:
    """One side's harness modules, by their path beside main.py in its sandbox."""
    package = files("envs.sandbox.harness")
    read = {n: package.joinpath(n).read_text(encoding="utf-8") for n in MODULES[side]}
    return {f"harness/{name}": text for name, text in read.items()}


GRACE_S = 1.0  # how long the checks wait past a time limit for the code's own timer to answer
MAX_EVENTS = 8 * 2**20  # what we read of the checks' results (a few KiB each at most)


def run_checks(  # noqa: PLR0913
    code: str,
    checks: Sequence[Check],
    *,
    per_check_s: float = 3.0,
    memory_mb: int = 512,
    hide: Sequence[str] = (),
    helpers: str = "",
    entry_points: Sequence[str] = (),
) -> CheckRun:
    """Load `code` once, then run every check against it: the code in one sandboxed process,
    the checks in another that decides each verdict (envs/sandbox/harness). `hide`: more
    directories neither may see (where the tests came from, say). `helpers`: the task's own
    code (functions the tests call besides the one asked for), run in the checking process;
    its names win over the candidate's. `entry_points`: the names the task asks the code to
    define; the checks take them from the code even when one is named like a builtin or a
    standard module (other such names never hide those)."""
    timeout = (per_check_s + GRACE_S) * (len(checks) + 1) + 2
    requests_read, requests_write = os.pipe()  # the checks ask...
    answers_read, answers_write = os.pipe()  # ...and the code answers
    pipes = [requests_read, requests_write, answers_read, answers_write]
    given = {"checks": [_as_json(c) for c in checks], "limit": per_check_s, "grace": GRACE_S}
    given |= {"helpers": helpers, "entry_points": list(entry_points)}
    given |= {"read_fd": answers_read, "write_fd": requests_write}
    code_given = {"code": code, "limit": per_check_s, "read_fd": requests_read}
    code_given["write_fd"] = answers_write
    start = functools.partial(Sandboxed, memory_mb=memory_mb, hide=hide, plan=sandbox_plan())
    try:
        with contextlib.ExitStack() as stack:
            checks_side = stack.enter_context(
                start(
                    CHECKS_SIDE,
                    stdin=json.dumps(given) + "\n",
                    timeout_s=timeout,
                    pass_fds=[answers_read, requests_write],
                    files=harness_files("checks"),
                )
            )
            code_side = stack.enter_context(
                start(
                    CODE_SIDE,
                    stdin=json.dumps(code_given) + "\n",
                    timeout_s=timeout + GRACE_S,
                    pass_fds=[requests_read, answers_write],
                    files=harness_files("code"),
                )
            )
            while pipes:  # now only they hold the pipes: an end closes when one ends
                os.close(pipes.pop())
            checked, events, ran = _finish(checks_side, code_side)
    finally:
        while pipes:
            os.close(pipes.pop())
    return _collect(checks, events, checked, ran)


def _finish(
    checks_side: Sandboxed, code_side: Sandboxed
) -> tuple[SandboxResult, list[dict[str, object]], SandboxResult]:
    """Wait for the checks; then for the code only as long as it takes to say why it ended."""
    checked = checks_side.finish(max_output=MAX_EVENTS)
    events = _events(checked.stdout)
    # when the checks saw it end, let it finish saying why; otherwise it is not needed
    lost = any(e.get("down") == "lost" or "load_lost" in e for e in events)
    return checked, events, code_side.finish(within_s=GRACE_S if lost else 0)


def _collect(
    checks: Sequence[Check],
    events: list[dict[str, object]],
    checked: SandboxResult,
    ran: SandboxResult,
) -> CheckRun:
    load_error = _load_error(events, checked, ran)
    by_index = {e["index"]: e for e in events if isinstance(e.get("index"), int)}
    stopped = f"did not finish: the checks were stopped ({checked.reason})"
    results = []
    for i, check in enumerate(checks):
        event = by_index.get(i)
        if load_error is not None:
            results.append(CheckResult(check, False, error=load_error))
        elif event is None:
            results.append(CheckResult(check, False, error=stopped))
        elif "down" in event:
            results.append(CheckResult(check, False, error=_down(event["down"], ran)))
        else:
            results.append(_result(check, event))
    return CheckRun(tuple(results), load_error, checked, ran)


def _down(why: object, ran: SandboxResult) -> str:
    if why == "hung":
        return "did not run: the code stopped answering after an earlier check timed out"
    if why == "garbled":
        return "did not finish: the code's process sent something that is not an answer"
    return f"did not finish: the code's process {_ended(ran)}" + _stderr_tail(ran)


def _ended(ran: SandboxResult) -> str:
    if ran.reason in ("ok", f"exit code {ran.returncode}"):
        return f"exited with code {ran.returncode}"
    return f"was stopped ({ran.reason})"


def _as_json(check: Check) -> dict[str, object]:
    return {
        "source": check.source,
        "expected": check.expected,
        "setup": check.setup,
        "approx": check.approx,
    }


def _events(stdout: str) -> list[dict[str, object]]:
    events = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # cut by the output limit
        if isinstance(event, dict):
            events.append(event)
    return events


def _result(check: Check, event: dict[str, object]) -> CheckResult:
    got, error = event.get("got"), event.get("error")
    return CheckResult(
        check,
        event.get("passed") is True,
        got if isinstance(got, str) else None,
        error if isinstance(error, str) else None,
    )


def _load_error(
    events: list[dict[str, object]], checked: SandboxResult, ran: SandboxResult
) -> str | None:
    for event in events:
        if isinstance(event.get("load_error"), str):
            return str(event["load_error"])
        if event.get("load_lost") == "Garbled":
            return "the code's process sent something that is not an answer while loading"
        if "load_lost" in event:
            how = f"the code's process {_ended(ran)} while the code was loading"
            return how + _stderr_tail(ran)
    if any("loaded" in event for event in events):
        return None
    return f"the checks were stopped ({checked.reason}) while the code was loading"


def _stderr_tail(sandbox: SandboxResult) -> str:
    lines = [line for line in sandbox.stderr.splitlines() if line.strip()]
    return (":\n" + "\n".join(lines[-4:])) if lines else ""


def render(run: CheckRun, noun: str = "example", max_failures: int = 10) -> str:
    """Feedback text: how many passed, then each failing check with expected vs got or its error."""
    if run.load_error is not None:
        return f"The code failed before any {noun} could run:\n{_indent(run.load_error)}"
    failed = [r for r in run.results if not r.passed]
    lines = [f"{run.passed} of {len(run.results)} {noun}s passed."]
    for r in failed[:max_failures]:
        label = _short(" ".join(r.check.label.split()), 200)
        if r.error is not None and r.error.startswith(("timed out", "did not ")):
            lines.append(f"{noun.capitalize()} `{label}` {r.error}.")
        elif r.error is not None:
            lines.append(f"{noun.capitalize()} `{label}` raised an error:\n{_indent(r.error)}")
        else:
            expected = _short(" ".join((r.check.expected or "").split()), 200)
            lines.append(f"{noun.capitalize()} `{label}` failed: expected {expected}, got {r.got}")
    if len(failed) > max_failures:
        lines.append(f"... and {len(failed) - max_failures} more failing {noun}s.")
    return "\n".join(lines)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 20] + " ... " + text[-15:]


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
