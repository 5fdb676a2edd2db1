"""A token and time budget for one invocation of a run (`--max-tokens-total`, `--timeout`); a
trial's own (`--task-tokens`) is the trial's (reflexion.trial.recorded.TokenBudgetSpent).

The budget taps the trace: every model call a trial records is charged as it lands, so the
tokens of trials still in flight count too. Once a limit is reached the runner starts no new
trial and cancels the ones in flight (a resume sets their partial trace aside and re-runs them).

    >>> budget = Budget(max_tokens=100, timeout_s=None)
    >>> budget.charge(Step("s", "r", "single", "t", 0, 1, "generate", input_tokens=90,
    ...                    output_tokens=20))
    >>> budget.spent
    'tokens'
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from reflexion.core.records import Step


@dataclass(frozen=True)
class Stop:
    """Why a run stopped before every trial finished."""

    reason: str  # "tokens" | "time"
    limit: float
    used: float

    def message(self) -> str:
        if self.reason == "tokens":
            spent = f"token budget of {self.limit:.0f} spent ({self.used:.0f} used)"
        else:
            spent = f"time budget of {self.limit:g} s spent ({self.used:.1f} s used)"
        return f"stopped: {spent}; run the same command to resume"


class Budget:
    """Counts this invocation's model tokens (calls answered from the run's cache cost none)
    and its wall time since construction; calls `on_spent`'s callback once a limit is reached."""

    def __init__(self, max_tokens: int | None, timeout_s: float | None) -> None:
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.tokens = 0
        self.spent: str | None = None  # "tokens" | "time"
        self._start = time.monotonic()
        self._stop: Callable[[], None] = lambda: None

    def on_spent(self, stop: Callable[[], None]) -> None:
        self._stop = stop

    def tap(self, sink: Callable[[Step], None]) -> Callable[[Step], None]:
        """`sink`, charging each step after it is written."""

        def write(step: Step) -> None:
            sink(step)
            self.charge(step)

        return write

    def charge(self, step: Step) -> None:
        if step.data.get("reused"):
            return
        self.tokens += step.input_tokens + step.output_tokens
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            self._spend("tokens")

    async def clock(self) -> None:
        """Sleep until the time limit, then spend the budget (never returns with no limit)."""
        if self.timeout_s is None:
            await asyncio.Event().wait()
        else:
            await asyncio.sleep(max(0.0, self.timeout_s - self.elapsed()))
        self._spend("time")

    def _spend(self, reason: str) -> None:
        if self.spent is None:
            self.spent = reason
            # subtle: at once, not from another task, so the trial that spent the last token
            # cannot start one more model call before it is cancelled.
            self._stop()

    def elapsed(self) -> float:
        return time.monotonic() - self._start

    def stop(self) -> Stop:
        if self.spent == "tokens":
            return Stop("tokens", float(self.max_tokens or 0), float(self.tokens))
        return Stop("time", float(self.timeout_s or 0), self.elapsed())
