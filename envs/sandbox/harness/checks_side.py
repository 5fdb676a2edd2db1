"""The checks' process: runs the checks (the expected values, the hidden tests) and decides each
verdict. It never loads the candidate's code: a name the code defines is a `Handle` that
forwards calls to the code's process, and comparisons happen here, with our own `==`.

Its first stdin line: {"checks", "limit", "grace", "helpers", "entry_points", "read_fd",
"write_fd"}; it writes one JSON line per event to its stdout. Standard library only.

    >>> same(0.1 + 0.2, 0.3, approx=True), same([1], (1,), approx=True)
    (True, False)
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import json
import math
import os
import signal
import sys
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any

from .proxy import CheckTimeout, CodeSide, Handle, Unavailable, type_name
from .wire import MAX_DEPTH, Capped, Channel, Garbled, Lost, Message, decode


def on_alarm(signum: int, frame: FrameType | None) -> None:
    raise CheckTimeout


def short(text: str, n: int = 240) -> str:
    return text if len(text) <= n else text[: n - 20] + " ... " + text[-15:]


def describe(exc: BaseException, limit: float) -> str:
    if isinstance(exc, CheckTimeout):
        return f"timed out after {limit:g} s"
    text = getattr(exc, "from_code", None)
    if text is not None:
        return short(text, 1500)
    return short("".join(traceback.format_exception_only(type(exc), exc)).strip(), 1500)


def timed(run: Callable[[], Any], limit: float) -> Any:
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def same(got: Any, want: Any, approx: bool) -> bool:
    numbers = (int, float)
    if approx and type(got) in numbers and type(want) in numbers:
        return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    if approx and type(got) is type(want) and type(got) in (list, tuple):
        return len(got) == len(want) and all(
            same(g, w, approx) for g, w in zip(got, want, strict=False)
        )
    return bool(got == want)


def shown(got: Any) -> str:
    text = repr(got)
    if isinstance(got, Handle):
        text += f" (of type {type_name(got)}: not plain data, so compared by identity)"
    return short(text)


def run_check(check: Message, scope: dict[str, Any], code_side: CodeSide) -> Message:
    printed = Capped()
    with contextlib.redirect_stdout(printed):
        exec(compile(check["setup"], "<setup>", "exec"), scope)
        if check["expected"] is None:
            exec(compile(check["source"], "<check>", "exec"), scope)
            return {"passed": True}
        got = eval(compile(check["source"], "<check>", "eval"), scope)
        asked = code_side.asked
        try:
            want = eval(compile(check["expected"], "<want>", "eval"), scope)
        except (SyntaxError, NameError) as exc:
            if isinstance(exc, NameError) and code_side.asked != asked:
                raise  # the code's own answer, not a sign that this is text
            # an expected output that is not an expression: compare it as printed text
            text = check["expected"].strip()
            said = printed.getvalue().strip() if got is None else repr(got)
            return {"passed": text in (said, str(got)), "got": short(said)}
        if holds_handle(want):
            kind = type_name(want) if isinstance(want, Handle) else "its own type"
            msg = (
                f"the expected value is an object of the code ({kind}), which it could make "
                "equal to anything: compare plain values instead"
            )
            raise TypeError(msg)
        return {"passed": same(got, want, check["approx"]), "got": shown(got)}


def holds_handle(value: Any, depth: int = 0) -> bool:
    if isinstance(value, Handle):
        return True
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return any(
            holds_handle(k, depth + 1) or holds_handle(v, depth + 1) for k, v in dict.items(value)
        )
    if isinstance(value, list | tuple | set | frozenset):
        return any(holds_handle(v, depth + 1) for v in value)
    return False


def namespace(
    loaded: dict[str, Message], code_side: CodeSide, helpers: str, entry_points: list[str]
) -> dict[str, Any]:
    """The names the code defined, as the checks see them."""
    found: dict[str, Any] = {"__name__": "checks"}
    for name, entry in loaded.items():
        if name in entry_points and not name.startswith("__"):
            pass  # what the task asks for is the code's, even when named like a builtin
        elif name.startswith("__") or name in builtins.__dict__:
            continue  # the checks keep Python's own `isinstance`, `abs`, `__builtins__`, ...
        if "module" in entry:
            module = str(entry["module"])
            # only a standard module under its own name: `math` cannot stand for another one
            if module.split(".")[0] in sys.stdlib_module_names and module.split(".")[-1] == name:
                found[name] = importlib.import_module(module)
        elif name in sys.stdlib_module_names and name not in entry_points:
            continue  # nor can an object of the code
        else:
            found[name] = decode(entry["value"], code_side.handle)
    exec(compile(helpers, "<helpers>", "exec"), found)  # the task's own: they win
    return found


def start(given: Message, code_side: CodeSide, emit: Callable[..., Any]) -> dict[str, Any] | None:
    """Wait for the code to load; the names the checks run with, or None (the reason emitted)."""
    limit, grace = given["limit"], given["grace"]
    try:
        first = code_side.channel.receive(limit + grace)
    except (Lost, Garbled) as exc:
        emit(load_lost=type(exc).__name__)
        return None
    if first is None:
        emit(load_error=f"timed out after {limit:g} s")
        return None
    if "loaded" not in first:
        emit(load_error=str(first.get("load_error", "the code's process sent no names")))
        return None
    signal.signal(signal.SIGALRM, on_alarm)
    try:
        loaded, helpers, entry_points = first["loaded"], given["helpers"], given["entry_points"]
        return timed(  # type: ignore[no-any-return]
            lambda: namespace(loaded, code_side, helpers, entry_points), limit
        )
    except BaseException as exc:  # noqa: BLE001 - the code's names broke the start: say how
        emit(load_error="the checks could not start: " + describe(exc, limit))
        return None


def main() -> None:
    given = json.loads(sys.stdin.readline())
    null = os.open(os.devnull, os.O_RDWR)
    out = os.dup(1)
    os.dup2(null, 1)  # what the tests print is not an event

    def emit(**fields: Any) -> None:
        os.write(out, (json.dumps(fields) + "\n").encode())

    limit = given["limit"]
    code_side = CodeSide(Channel(given["read_fd"], given["write_fd"]), given["grace"])
    base = start(given, code_side, emit)
    if base is None:
        return
    emit(loaded=True)
    for index, check in enumerate(given["checks"]):
        if code_side.down is not None:
            emit(index=index, passed=False, down=code_side.down)
            continue
        try:
            outcome = timed(lambda: run_check(check, dict(base), code_side), limit)  # noqa: B023
        except Unavailable:
            outcome = {"passed": False, "down": code_side.down}
        except BaseException as exc:  # noqa: BLE001 - a failing check is a verdict
            outcome = {"passed": False, "error": describe(exc, limit)}
        emit(index=index, **outcome)
