"""The wire between the code's process and the checks' process: how a value is written, and a
line-based channel over two pipe ends. Standard library only: it runs under whatever Python the
sandbox has.

Plain built-in data crosses by value: None, bool, int, float, complex, str, bytes, and lists,
tuples, dicts, sets and frozensets of them. An instance of a subclass of one (a Counter, a
namedtuple, an IntEnum, an int whose `__eq__` says yes to everything) crosses as its plain
content, read with the base type's own methods, and arrives as the plain type. Anything else
crosses as a handle, `{"h": [id, type name]}`.

    >>> encode((1, {"a": b"x"}), handle=lambda v: {"h": [0, "?"]})
    {'t': [1, {'d': [['a', {'b': '78'}]]}]}
    >>> decode({'t': [1, {'d': [['a', {'b': '78'}]]}]}, handle=lambda body: None)
    (1, {'a': b'x'})
"""

from __future__ import annotations

import io
import json
import os
import select
import time
from collections.abc import Callable
from typing import Any

MAX_LINE = 16 * 2**20  # one message; a longer line is garbage
MAX_DEPTH = 100
MAX_PRINTED = 2**20  # what a call or a check may print that is kept

Message = dict[str, Any]


class Capped(io.StringIO):
    """Collects printed text up to MAX_PRINTED characters and drops the rest."""

    def write(self, text: str) -> int:
        room = MAX_PRINTED - self.tell()
        if room > 0:
            super().write(text[:room])
        return len(text)


class Lost(Exception):  # noqa: N818 - a state, not an error of ours
    """The other process closed the pipe: it ended."""


class Garbled(Exception):  # noqa: N818
    """The other process sent something that is not a message."""


def encode(value: Any, handle: Callable[[Any], Any], depth: int = 0) -> Any:
    """Plain data as itself; anything else as `handle(value)`."""
    # A subclass of a plain type (Counter, namedtuple, an IntEnum) goes as its plain content,
    # read with the base type's own methods: the other side rebuilds the plain type.
    if value is None or isinstance(value, bool):
        return bool(value) if value is not None else None
    if isinstance(value, int):
        number = int.__int__(value)
        return number if -(2**53) < number < 2**53 else {"i": hex(number)}
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if depth > MAX_DEPTH:
        msg = f"a value nested more than {MAX_DEPTH} deep"
        raise ValueError(msg)
    return _encode_container(value, handle, depth)


def _encode_container(value: Any, handle: Callable[[Any], Any], depth: int) -> Any:
    def inner(items: Any) -> list[Any]:
        return [encode(v, handle, depth + 1) for v in items]

    if isinstance(value, list):
        return inner(list.__iter__(value))
    kinds: tuple[tuple[Any, str], ...] = ((tuple, "t"), (set, "s"), (frozenset, "f"))
    for kind, tag in kinds:
        if isinstance(value, kind):
            return {tag: inner(kind.__iter__(value))}
    if isinstance(value, dict):
        return {"d": [inner(pair) for pair in dict.items(value)]}
    if isinstance(value, bytes):
        return {"b": bytes.hex(value)}
    if isinstance(value, complex):
        return {"c": [complex.real.__get__(value), complex.imag.__get__(value)]}
    return handle(value)


def decode(data: Any, handle: Callable[[Any], Any], depth: int = 0) -> Any:
    """The value `encode` wrote; a handle's body goes to `handle`. Anything else is Garbled."""
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if depth > MAX_DEPTH + 1:
        msg = "nested too deep"
        raise Garbled(msg)
    if kind is list:
        return [decode(v, handle, depth + 1) for v in data]
    if kind is not dict or len(data) != 1:
        raise Garbled(f"not a value: {data!r:.80}")  # noqa: EM102 - short, and ours
    ((tag, body),) = data.items()
    if tag in ("t", "s", "f") and type(body) is list:
        items = [decode(v, handle, depth + 1) for v in body]
        return {"t": tuple, "s": set, "f": frozenset}[tag](items)
    if tag == "d" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
        return {decode(k, handle, depth + 1): decode(v, handle, depth + 1) for k, v in body}
    return _decode_scalar(tag, body, data, handle)


def _decode_scalar(tag: str, body: Any, data: Any, handle: Callable[[Any], Any]) -> Any:
    if tag == "i" and type(body) is str:
        return int(body, 16)
    if tag == "b" and type(body) is str:
        return bytes.fromhex(body)
    if tag == "c" and type(body) is list and len(body) == 2:
        return complex(*body)
    if tag == "h" and type(body) is list and len(body) == 2:
        return handle(body)
    raise Garbled(f"not a value: {data!r:.80}")  # noqa: EM102


class Channel:
    """Messages, one JSON object per line, read from one fd and written to another."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd
        self.buffer = bytearray()
        # subtle: bound now, so code that patches json or os after loading cannot reach them
        self.dumps, self.loads, self.write, self.read = json.dumps, json.loads, os.write, os.read
        self.select, self.clock = select.select, time.monotonic

    def send(self, message: Message, wait: float | None = None) -> bool:
        """Write one message; False when `wait` seconds pass first (the reader stopped reading)."""
        deadline = None if wait is None else self.clock() + wait
        data = memoryview((self.dumps(message) + "\n").encode())
        while data:
            if deadline is not None:
                left = deadline - self.clock()
                if left <= 0 or not self.select([], [self.write_fd], [], left)[1]:
                    return False
            try:
                # a pipe that selects writable takes a 4 KiB write without blocking
                data = data[self.write(self.write_fd, data[:4096]) :]
            except (BrokenPipeError, ConnectionResetError):
                raise Lost from None
        return True

    def receive(self, wait: float | None = None) -> Message | None:
        """The next message; None when `wait` seconds pass first."""
        deadline = None if wait is None else self.clock() + wait
        while True:
            message = self._buffered()
            if message is not None:
                return message
            if len(self.buffer) > MAX_LINE:
                raise Garbled(f"a message longer than {MAX_LINE} bytes")  # noqa: EM102
            if deadline is not None:
                left = deadline - self.clock()
                if left <= 0 or not self.select([self.read_fd], [], [], left)[0]:
                    return None
            chunk = self.read(self.read_fd, 1 << 16)
            if not chunk:
                raise Lost
            self.buffer += chunk

    def _buffered(self) -> Message | None:
        """The first whole line in the buffer as a message, or None when there is none yet."""
        end = self.buffer.find(b"\n")
        if end < 0:
            return None
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        try:
            message = self.loads(line)
        except (ValueError, RecursionError):
            msg = "not JSON"
            raise Garbled(msg) from None
        if type(message) is not dict:
            msg = "not a message"
            raise Garbled(msg)
        return message
