"""A minimal OpenAI-compatible chat server on loopback, answering from a script.

A script entry is the answer's text, or a `Fault` the server commits for that request instead:

    StubServer(["ok", HTTP_429, HANG, "ok again"])
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """One misbehaving answer: an HTTP status with an error body, a raw body, or a hang."""

    status: int = 200
    body: bytes | None = None  # sent as is (with status) instead of a completion
    hang_s: float = 0.0  # sleep before answering (cut short when the server stops)
    content: str | None = "stub answer"  # a completion's content, when body is None
    # Tell the openai client not to retry on its own, so only reflexion's retries are counted.
    headers: dict[str, str] = field(default_factory=lambda: {"x-should-retry": "false"})


HTTP_429 = Fault(429, b'{"error": {"message": "rate limited", "type": "rate_limit"}}')
HTTP_500 = Fault(500, b'{"error": {"message": "internal error", "type": "server_error"}}')
HANG = Fault(hang_s=30.0)
INVALID_JSON = Fault(200, b'{"choices": [ this is not json')
EMPTY = Fault(content="")


class _Server(ThreadingHTTPServer):
    # subtle: the default backlog of 5 refuses connections when a loaded machine runs several
    # trials' calls at once, and the client's retry then shows up in the trace as a difference
    request_queue_size = 128


class StubServer:
    """Serves POST /v1/chat/completions: each request gets the next scripted reply."""

    def __init__(
        self, replies: list[str | Fault] | Callable[[dict[str, Any]], str], delay_s: float = 0.0
    ) -> None:
        # a list: the next reply for each request; a function: the reply to each request's body
        self.answer = replies if callable(replies) else None
        self.replies: Iterator[str | Fault] = iter([] if callable(replies) else replies)
        self.requests: list[dict[str, Any]] = []
        self.delay_s = delay_s
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def _reply(self, body: dict[str, Any]) -> tuple[Fault, bytes]:
        with self._lock:
            self.requests.append(body)
            reply = self.answer(body) if self.answer else next(self.replies, "SCRIPT EXHAUSTED")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        fault = reply if isinstance(reply, Fault) else Fault(content=reply, headers={})
        time.sleep(self.delay_s)
        self._stopping.wait(fault.hang_s)
        with self._lock:
            self.in_flight -= 1
        if fault.body is not None:
            return fault, fault.body
        return fault, json.dumps(self._completion(body, fault.content)).encode()

    def _completion(self, body: dict[str, Any], text: str | None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fault, data = stub._reply(body)
                try:
                    self.send_response(fault.status)
                    for name, value in fault.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a hang past its timeout)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
