"""The code's process: loads the candidate's code and does what the checks' process asks of it
(call a function, read an attribute, take a length, iterate). It answers with values, never with
verdicts: it holds no test, no expected value and no way to report a pass.

Its first stdin line: {"code", "limit", "read_fd", "write_fd"}. Standard library only.

    >>> sorted(OPERATIONS)[:3]
    ['bool', 'call', 'getattr']
"""

from __future__ import annotations

import contextlib
import json
import linecache
import signal
import sys
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any

from .wire import MAX_LINE, Capped, Channel, Garbled, Lost, Message, decode, encode


class CallTimeout(BaseException):
    pass


def on_alarm(signum: int, frame: FrameType | None) -> None:
    raise CallTimeout


def timed(run: Callable[[], Any], limit: float) -> Any:
    signal.setitimer(signal.ITIMER_REAL, max(limit, 0.001))
    try:
        return run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def describe(exc: BaseException) -> str:
    """The exception with the code's last lines of traceback (not ours)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "solution.py"]
    where = "".join(traceback.format_list(frames[-3:]))
    last = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    text = where + last
    return text if len(text) <= 1500 else text[:1480] + " ... " + text[-15:]


class Objects:
    """What stays here and crosses as a handle: functions, the code's own objects, iterators."""

    def __init__(self) -> None:
        self.by_id: dict[int, Any] = {}

    def handle(self, value: Any) -> Message:
        key = id(value)
        self.by_id[key] = value  # kept alive: the tester may use it again
        return {"h": [key, type(value).__name__]}

    def find(self, body: list[Any]) -> Any:
        if type(body[0]) is not int or body[0] not in self.by_id:
            msg = "no such object"
            raise ValueError(msg)
        return self.by_id[body[0]]


def load(code: str, limit: float) -> dict[str, Any]:
    linecache.cache["solution.py"] = (len(code), None, code.splitlines(True), "solution.py")
    solution = type(sys)("solution")
    sys.modules["solution"] = solution
    with contextlib.redirect_stdout(Capped()):
        timed(lambda: exec(compile(code, "solution.py", "exec"), solution.__dict__), limit)
    return solution.__dict__


def names(namespace: dict[str, Any], objects: Objects) -> dict[str, Message]:
    found: dict[str, Message] = {}
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue
        if type(value) is type(sys):
            found[name] = {"module": value.__name__}
            continue
        try:
            found[name] = {"value": encode(value, objects.handle)}
            if len(json.dumps(found[name])) > MAX_LINE // 16:
                msg = "large: it stays here"
                raise ValueError(msg)
        except (ValueError, RecursionError):  # too large or too deep: it stays here
            found[name] = {"value": objects.handle(value)}
    return found


OPERATIONS: dict[str, Callable[..., Any]] = {
    "call": lambda obj, args, kwargs: obj(*args, **kwargs),
    "getattr": lambda obj, name: getattr(obj, name),
    "len": len,
    "iter": iter,
    "next": next,
    "getitem": lambda obj, key: obj[key],
    "bool": bool,
    "repr": repr,
    "str": str,
}


def serve(request: Message, objects: Objects) -> Message:
    """One request, all of it under one time limit, with its prints captured."""
    find, op = objects.find, request["op"]
    target = decode(request["target"], find)
    args = decode(request.get("args", []), find)
    kwargs = decode(request.get("kwargs", {"d": []}), find)
    answer: Message = {"id": request["id"]}

    def work() -> None:
        if op == "call":
            value = target(*args, **kwargs)
            answer["changed"] = changed(request, args, kwargs, objects)
        else:
            value = OPERATIONS[op](target, *args)
        answer["value"] = encode(value, objects.handle)

    printed = Capped()
    try:
        with contextlib.redirect_stdout(printed):
            timed(work, request["limit"])
    except StopIteration as exc:
        if op == "next":
            answer["stop"] = True
        else:  # from a call, it is an error like any other (it must not end the tests' loops)
            answer.update(raised="StopIteration", error=describe(exc))
    except CallTimeout:
        answer["timeout"] = True
    except BaseException as exc:  # noqa: BLE001 - whatever the code raises is its answer
        answer["raised"] = type(exc).__name__ if isinstance(exc, Exception) else "BaseException"
        answer["error"] = describe(exc)
    answer["printed"] = printed.getvalue()
    return answer


def changed(
    request: Message, args: list[Any], kwargs: dict[str, Any], objects: Objects
) -> list[list[Any]]:
    """The arguments the call changed in place (a list it sorted), as they are now."""
    found = []
    named = request.get("kwargs", {"d": []})["d"]
    sent_and_now = [
        *enumerate(zip(request["args"], args, strict=False)),
        *((k, (s, kwargs[k])) for (k, s) in named),
    ]
    for where, (sent, now) in sent_and_now:
        if type(now) in (list, dict, set):
            after = encode(now, objects.handle)
            if after != sent:
                found.append([where, after])
    return found


def reply(channel: Channel, answer: Message) -> None:
    """Send an answer; one too large to read becomes an error the checks can show."""
    line = json.dumps(answer)
    if len(line) >= MAX_LINE:
        size, most = len(line) >> 20, MAX_LINE >> 20
        error = f"ValueError: the answer is too large to check ({size} MiB; at most {most})"
        answer = {"id": answer.get("id"), "raised": "ValueError", "printed": "", "error": error}
    channel.send(answer)


def main() -> None:
    given = json.loads(sys.stdin.readline())
    channel = Channel(given["read_fd"], given["write_fd"])
    signal.signal(signal.SIGALRM, on_alarm)
    objects = Objects()
    try:
        try:
            namespace = load(given["code"], given["limit"])
            reply(channel, {"loaded": names(namespace, objects)})
        except CallTimeout:
            channel.send({"load_error": "timed out after {:g} s".format(given["limit"])})
            return
        except (Lost, Garbled):
            return
        except BaseException as exc:  # noqa: BLE001 - the code failed to load: say how
            channel.send({"load_error": describe(exc)})
            return
        while True:
            request = channel.receive()
            assert request is not None  # no wait given: a message or an exception
            try:
                answer = serve(request, objects)
            except (KeyError, TypeError, ValueError, Garbled) as exc:
                answer = {"id": request.get("id"), "raised": "Exception", "error": repr(exc)}
            reply(channel, answer)
    except (Lost, Garbled):
        return  # the checks are done, or sent garbage: nothing more to do
