"""The quadratic drill's problems and the arithmetic on them: vectors as text, one gradient step.

>>> parse_vector("next x = [1, 2.5]", dim=2)
[1.0, 2.5]
>>> gradient_step([0.0], gradient=[2.0], step=0.25)
[0.5]
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

NUMBER_LIST = re.compile(r"\[([^\[\]]*)\]")
TOLERANCE = 0.05  # solved when ||x - t||^2 <= TOLERANCE
UNPARSEABLE = -1e9  # the score of a candidate that is not a vector of the right size


@dataclass(frozen=True)
class Problem:
    target: tuple[float, ...]
    step: float  # a, the gradient step size the task states


def format_vector(x: Sequence[float]) -> str:
    return "[" + ", ".join(f"{v:.10g}" for v in x) + "]"


def parse_vector(text: str, dim: int) -> list[float] | None:
    """The last bracketed list of `dim` numbers in `text`, or None."""
    for inner in reversed(NUMBER_LIST.findall(text)):
        try:
            values = [float(v) for v in inner.split(",") if v.strip()]
        except ValueError:
            continue
        if len(values) == dim:
            return values
    return None


def gradient_step(x: Sequence[float], gradient: Sequence[float], step: float) -> list[float]:
    """One ascent step on s: x + a * grad s(x) = x + 2a(t - x)."""
    return [xi + step * gi for xi, gi in zip(x, gradient, strict=True)]


def make_problems(count: int = 8, seed: int = 20230320) -> list[Problem]:
    """Tasks of growing dimension and mixed step sizes: some converge in 2 steps, some not in 5."""
    rng = random.Random(seed)
    dims = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16]
    steps = [0.45, 0.4, 0.3, 0.25, 0.2, 0.35, 0.15, 0.1, 0.3, 0.4]
    return [
        Problem(tuple(round(rng.uniform(-3, 3), 3) for _ in range(dims[i % 10])), steps[i % 10])
        for i in range(count)
    ]
