"""Every strategy is one small module on the same loop; this registry maps names to them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum

from reflexion.errors import UsageError
from reflexion.strategies import correct, reflexion, resample, self_refine, single
from reflexion.trial import Trial


class Strategy(StrEnum):
    SINGLE = "single"
    RESAMPLE = "resample"
    CORRECT = "correct"
    SELF_REFINE = "self-refine"
    REFLEXION = "reflexion"
    REFLEXION_WINDOW = "reflexion-window"


RUNS: dict[Strategy, Callable[[Trial], Awaitable[None]]] = {
    Strategy.SINGLE: single.run,
    Strategy.RESAMPLE: resample.run,
    Strategy.CORRECT: correct.run,
    Strategy.SELF_REFINE: self_refine.run,
    Strategy.REFLEXION: reflexion.run,
    Strategy.REFLEXION_WINDOW: reflexion.run,
}


def parse_strategies(text: str) -> list[Strategy]:
    """Parse "self-refine,reflexion" into Strategy members; an unknown name is a UsageError."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    known = ", ".join(s.value for s in Strategy)
    if not names:
        msg = f"no strategy given; known: {known}"
        raise UsageError(msg)
    bad = [n for n in names if n not in Strategy._value2member_map_]
    if bad:
        msg = f"unknown strategy {bad[0]!r}; known: {known}"
        raise UsageError(msg)
    if len(set(names)) != len(names):
        msg = f"strategy listed twice in {text!r}"
        raise UsageError(msg)
    return [Strategy(n) for n in names]
