"""Retrying model calls that failed for a passing reason (timeouts, lost connections, 429, 5xx).

A transient failure is retried with exponential backoff plus jitter; any other failure, or the
last transient one, comes back as a text for the attempt's record (STYLE habit 6):

    >>> import asyncio
    >>> async def flaky() -> str:
    ...     raise ConnectionError("reset by peer")
    >>> asyncio.run(RetryPolicy(retries=1, base_s=0.0).call(flaky)).error
    'ConnectionError: reset by peer (gave up after 2 attempts)'
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

# By class name, anywhere in the exception's MRO, so no client library has to be imported:
# openai's, langchain-core's, httpx's, and the builtin ones.
TRANSIENT_NAMES = frozenset(
    {
        "ModelRateLimitError",  # langchain-core
        "ModelConnectionError",
        "ModelTimeoutError",
        "RateLimitError",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        "TimeoutException",  # httpx
        "NetworkError",  # httpx
        "RemoteProtocolError",  # httpx: the server hung up mid-answer
        "TimeoutError",  # also asyncio.TimeoutError, our per-call limit
        "ConnectionError",
    }
)
RETRY_STATUS = frozenset({408, 409, 429})  # and every 5xx


def is_transient(exc: BaseException) -> bool:
    """Whether trying the same request again may succeed.

    >>> is_transient(TimeoutError()), is_transient(ValueError("bad request"))
    (True, False)
    """
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in RETRY_STATUS or status >= 500
    return any(cls.__name__ in TRANSIENT_NAMES for cls in type(exc).__mro__)


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What `RetryPolicy.call` ends with: a value, or the reason it has none."""

    value: T | None
    error: str | None
    retries: int  # tries after the first


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` more tries after a transient failure, each after about base_s * 2**n seconds
    (x1 to x1.5 jitter, at most cap_s); every try is cut off after `call_timeout_s`."""

    retries: int = 3
    base_s: float = 0.5
    cap_s: float = 30.0
    call_timeout_s: float = 600.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # tests pass a recorder

    def delay(self, retry: int) -> float:
        # subtle: jitter spreads out concurrent trials that hit the same rate limit together
        return min(self.cap_s, self.base_s * 2.0**retry * random.uniform(1.0, 1.5))

    async def call(self, make: Callable[[], Awaitable[T]]) -> Outcome[T]:
        """Await `make()` until it answers, fails for good, or the tries run out."""
        last: BaseException | None = None
        for n in range(self.retries + 1):
            if n:
                await self.sleep(self.delay(n - 1))
            try:
                value = await asyncio.wait_for(make(), self.call_timeout_s)
            except Exception as exc:  # noqa: BLE001 - a failing model is data, not a crash
                if not is_transient(exc):
                    return Outcome(None, f"{self._describe(exc)} (not retried: not transient)", n)
                last = exc
                continue
            return Outcome(value, None, n)
        assert last is not None
        tries = f"{self.retries + 1} attempt{'s' * (self.retries > 0)}"
        return Outcome(None, f"{self._describe(last)} (gave up after {tries})", n)

    def _describe(self, exc: BaseException) -> str:
        text = str(exc).strip() or (
            f"no answer within {self.call_timeout_s:g} s" if isinstance(exc, TimeoutError) else ""
        )
        return f"{type(exc).__name__}: {text}".strip().rstrip(":")
