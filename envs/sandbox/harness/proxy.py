"""The code's process as the checks' process sees it: `CodeSide` sends requests and rebuilds the
answers, and a `Handle` stands for a function or object that lives over there. A handle forwards
calls, attribute reads, `len`, iteration, indexing, `bool`, `str` and `repr`, and nothing else;
it is equal only to itself. Standard library only.

    >>> CodeSide(channel=None, grace=1.0).rebuilt("ValueError", "bad").__class__.__name__
    'ValueError'
"""

from __future__ import annotations

import builtins
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .wire import Channel, Garbled, Lost, Message, decode, encode

# never taken from the code's answers: only a `next` answer ends an iteration here
NOT_MAPPED = ("StopIteration", "StopAsyncIteration", "GeneratorExit")


class CheckTimeout(BaseException):
    pass


class CodeError(Exception):
    """An exception the code raised that is not one of Python's own."""


class Unavailable(BaseException):
    """The code's process ended, hung or garbled its answers: no check can run any more."""


class CodeSide:
    """The candidate's process, seen from here."""

    def __init__(self, channel: Channel, grace: float) -> None:
        self.channel, self.grace = channel, grace
        self.handles: dict[tuple[Any, str], Handle] = {}
        self.down: str | None = None  # why it can no longer answer: "lost", "hung", "garbled"
        self.asked = 0  # requests made so far; also the next request's id

    def handle(self, body: list[Any]) -> Handle:
        key = (body[0], str(body[1]))
        if key not in self.handles:
            self.handles[key] = Handle(self, body)
        return self.handles[key]

    def ask(
        self,
        op: str,
        target: Any,
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        if self.down is not None:
            raise Unavailable(self.down)
        request = self.request(op, target, args, kwargs)
        # subtle: our timer is paused while we talk, so it cannot cut a message in half. The
        # code's process gets what time we had left, and its own timer answers by then; an
        # answer that has not come `grace` seconds later will not come.
        left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        request["limit"] = left or self.grace
        deadline = time.monotonic() + request["limit"]
        try:
            answer = self.exchange(request, request["limit"] + self.grace)
        finally:
            if left:
                signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 1e-4))
        sys.stdout.write(str(answer.get("printed", "")))
        if op == "call":
            self.update(args, kwargs or {}, answer.get("changed", []))
        return self.outcome(op, answer)

    def request(
        self, op: str, target: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None
    ) -> Message:
        key = self.asked
        self.asked += 1
        try:
            request = {"id": key, "op": op, "target": target, "args": encode(list(args), self.sent)}
            if kwargs is not None:
                request["kwargs"] = encode(dict(kwargs), self.sent)
        except RecursionError:
            msg = "an argument nested too deep to pass to the code"
            raise ValueError(msg) from None
        return request

    def exchange(self, request: Message, wait: float) -> Message:
        """Send the request and wait up to `wait` seconds for its answer."""
        deadline = time.monotonic() + wait
        try:
            if not self.channel.send(request, wait):
                self.down = "hung"
                raise CheckTimeout
            while True:
                message = self.channel.receive(max(deadline - time.monotonic(), 0))
                if message is None:
                    self.down = "hung"
                    raise CheckTimeout
                if message.get("id") == request["id"]:
                    return message
        except Lost:
            self.down = "lost"
            raise Unavailable("lost") from None  # noqa: EM101 - a reason, not a message
        except Garbled:
            self.down = "garbled"
            raise Unavailable("garbled") from None  # noqa: EM101

    def outcome(self, op: str, answer: Message) -> Any:
        if answer.get("timeout"):
            raise CheckTimeout
        if answer.get("stop"):
            if op == "next":
                raise StopIteration
            answer = {"raised": "StopIteration", "error": "StopIteration"}
        if "raised" in answer:
            raise self.rebuilt(str(answer["raised"]), str(answer.get("error", "")))
        if "value" not in answer:
            self.down = "garbled"
            raise Unavailable("garbled")  # noqa: EM101
        try:
            return decode(answer["value"], self.handle)
        except (Garbled, ValueError, RecursionError):
            self.down = "garbled"
            raise Unavailable("garbled") from None  # noqa: EM101

    def rebuilt(self, name: str, text: str) -> Exception:
        """The code's exception, as one of Python's own types when it is one (`except
        ValueError` in a test works)."""
        kind = getattr(builtins, name, None) if name not in NOT_MAPPED else None
        exc_type = kind if isinstance(kind, type) and issubclass(kind, Exception) else CodeError
        exc: Exception = CodeError(text)
        for base in exc_type.__mro__:  # UnicodeDecodeError wants five arguments: UnicodeError
            try:
                exc = base(text)
                break
            except Exception:  # noqa: BLE001, S112 - try the next base
                continue
        exc.from_code = text  # type: ignore[attr-defined]
        return exc

    def sent(self, value: Any) -> Message:
        if isinstance(value, Handle):
            return {"h": object.__getattribute__(value, "_body")}
        msg = (
            f"cannot pass a {type(value).__name__} to the code: only plain data and the "
            "code's own objects can cross"
        )
        raise TypeError(msg)

    def update(self, args: Sequence[Any], kwargs: Mapping[str, Any], changes: Any) -> None:
        for where, data in changes:
            target: Any = kwargs.get(where) if type(where) is str else args[where]
            now = decode(data, self.handle)
            if type(target) is list and type(now) is list:
                target[:] = now
            elif type(target) in (dict, set) and type(now) is type(target):
                target.clear()
                target.update(now)


class Handle:
    """A function or object that lives in the code's process. Equal only to itself."""

    __slots__ = ("_code_side", "_body")

    def __init__(self, code_side: CodeSide, body: list[Any]) -> None:
        object.__setattr__(self, "_code_side", code_side)
        object.__setattr__(self, "_body", body)

    def _ask(self, op: str, *args: Any, kwargs: Mapping[str, Any] | None = None) -> Any:
        get = object.__getattribute__
        return get(self, "_code_side").ask(op, {"h": get(self, "_body")}, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ask("call", *args, kwargs=kwargs)

    def __getattr__(self, name: str) -> Any:
        return self._ask("getattr", name)

    def __setattr__(self, name: str, value: Any) -> None:
        msg = "cannot set attributes on an object of the code"
        raise AttributeError(msg)

    def __len__(self) -> int:
        return self._ask("len")  # type: ignore[no-any-return]

    def __iter__(self) -> Any:
        return self._ask("iter")

    def __next__(self) -> Any:
        return self._ask("next")

    def __getitem__(self, key: Any) -> Any:
        return self._ask("getitem", key)

    def __contains__(self, item: Any) -> bool:
        # all of it first, then our own `==`: iterating until a match would tell the code,
        # one `next` at a time, what the test looks for
        return item in list(iter(self))

    def __bool__(self) -> bool:
        return self._ask("bool")  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return self._ask("repr")  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self._ask("str")  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        # a plain value is never equal to one; two of the code's objects cannot be compared
        # here, since the code chooses which object each answer is
        if isinstance(other, Handle):
            msg = "two objects of the code cannot be compared: compare plain values"
            raise TypeError(msg)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = object.__hash__


def type_name(value: Handle) -> str:
    return str(object.__getattribute__(value, "_body")[1])
