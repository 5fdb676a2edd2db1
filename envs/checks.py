"""Run a candidate's code against a list of checks in ONE sandboxed process, each check isolated.

A check is an expression compared with an expected value (a docstring example, `assert f(1) == 2`)
or statements that pass when they raise nothing. A check that raises, or runs past its own time
limit, fails alone; the others still run.

    >>> run = run_checks("def inc(x):\\n    return x + 1\\n", [Check("inc(1)", "inc(1)", "2")])
    >>> [r.passed for r in run.results]
    [True]
"""

from __future__ import annotations

import ast
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from envs.harness import PROGRAM
from envs.sandbox import SandboxResult, run_python


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
    sandbox: SandboxResult

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)


def run_checks(
    code: str,
    checks: Sequence[Check],
    *,
    per_check_s: float = 3.0,
    memory_mb: int = 512,
    hide: Sequence[str] = (),
) -> CheckRun:
    """Load `code` once, then run every check against it, in one sandboxed process. `hide`:
    more directories the code must not see (where the tests came from, say)."""
    nonce = "@@" + secrets.token_hex(16) + "@@"
    given = {"nonce": nonce, "limit": per_check_s, "code": code}
    given["checks"] = [_as_json(c) for c in checks]
    timeout = per_check_s * (len(checks) + 1) + 2
    sandbox = run_python(
        PROGRAM, stdin=json.dumps(given) + "\n", timeout_s=timeout, memory_mb=memory_mb, hide=hide
    )
    events = _events(sandbox.stdout, nonce)
    load_error = _load_error(events, sandbox)
    by_index = {e["index"]: e for e in events if isinstance(e.get("index"), int)}
    stopped = f"did not finish: the run was stopped ({sandbox.reason})"
    results = tuple(
        _result(check, by_index.get(i), stopped if load_error is None else load_error)
        for i, check in enumerate(checks)
    )
    return CheckRun(results, load_error, sandbox)


def assert_checks(tests: Sequence[str]) -> list[Check]:
    """Checks from test code: each `assert A == B` compares A with B (so feedback can say what A
    was); the statements before an assert, earlier asserts' expressions included, are its setup.

        >>> [c.source for c in assert_checks(["x = 2\\nassert f(x) == 4"])]
        ['f(x)']
    """
    checks: list[Check] = []
    for test in tests:
        body = ast.parse(test).body
        if not any(isinstance(node, ast.Assert) for node in body):
            checks.append(Check(test.strip(), test))  # statements only: pass if nothing raises
            continue
        setup: list[str] = []
        for node in body:
            segment = ast.get_source_segment(test, node) or ast.unparse(node)
            if isinstance(node, ast.Assert):
                checks.append(_assert_check(node, segment, test, "\n".join(setup)))
                # later asserts see its side effects (a call that mutates), not its verdict
                segment = ast.get_source_segment(test, node.test) or ast.unparse(node.test)
            setup.append(segment)
    return checks


def _assert_check(node: ast.Assert, segment: str, test: str, setup: str) -> Check:
    test_expr = node.test
    is_equality = (
        isinstance(test_expr, ast.Compare)
        and len(test_expr.ops) == 1
        and isinstance(test_expr.ops[0], ast.Eq)
    )
    if is_equality and isinstance(test_expr, ast.Compare):
        left = ast.get_source_segment(test, test_expr.left) or ast.unparse(test_expr.left)
        right = ast.get_source_segment(test, test_expr.comparators[0])
        return Check(segment, left, right or ast.unparse(test_expr.comparators[0]), setup)
    return Check(segment, segment, None, setup)


def _as_json(check: Check) -> dict[str, object]:
    return {
        "source": check.source,
        "expected": check.expected,
        "setup": check.setup,
        "approx": check.approx,
    }


def _events(stdout: str, nonce: str) -> list[dict[str, object]]:
    events = []
    for line in stdout.splitlines():
        if line.startswith(nonce):
            try:
                events.append(json.loads(line[len(nonce) :]))
            except json.JSONDecodeError:
                continue  # cut by the output limit
    return events


def _result(check: Check, event: dict[str, object] | None, missing: str) -> CheckResult:
    if event is None:
        return CheckResult(check, False, error=missing)
    got, error = event.get("got"), event.get("error")
    return CheckResult(
        check,
        event.get("passed") is True,
        got if isinstance(got, str) else None,
        error if isinstance(error, str) else None,
    )


def _load_error(events: list[dict[str, object]], sandbox: SandboxResult) -> str | None:
    for event in events:
        if isinstance(event.get("load_error"), str):
            return str(event["load_error"])
    if any("loaded" in event for event in events):
        return None
    how = "exited" if sandbox.reason == "ok" else f"was stopped ({sandbox.reason})"
    return f"the run {how} while the code was loading" + _stderr_tail(sandbox)


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
        if r.error is not None and r.error.startswith("timed out"):
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
