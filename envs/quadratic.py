"""The drill from the Self-Refine notes: the loop with no LLM.

A candidate is a vector x written as text ("[0.5, -1.25]"). The visible score is
s(x) = -||x - t||^2 and its gradient 2(t - x); the scripted actor's reflection is one
gradient-ascent step x' = x + 2a(t - x), which for 0 < a < 1 strictly shrinks ||x - t||.
The target t is held out: it appears only in `evaluate`'s feedback, which never reaches a prompt.

    >>> env = QuadraticEnv()
    >>> task = env.tasks()[0]
    >>> env.score(task, "[0.0]").solved
    False
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reflexion.errors import UsageError
from reflexion.records import Score, Task

if TYPE_CHECKING:
    from envs.quadratic_actor import QuadraticActor

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


class QuadraticEnv:
    name = "quadratic"

    def __init__(self, problems: Sequence[Problem] | None = None) -> None:
        problems = list(problems) if problems is not None else make_problems()
        self._tasks = [_task(i, p) for i, p in enumerate(problems)]
        self._problems = {t.id: p for t, p in zip(self._tasks, problems, strict=True)}

    @classmethod
    def from_spec(cls, arg: str | None) -> QuadraticEnv:
        """`--env quadratic` (8 tasks) or `--env quadratic:N` (N tasks, 1..100)."""
        if arg is None:
            return cls()
        if not arg.isdigit() or not 1 <= int(arg) <= 100:
            msg = f"quadratic:N needs N between 1 and 100, got {arg!r}"
            raise UsageError(msg)
        return cls(make_problems(int(arg)))

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        problem = self._problems[task.id]
        x = parse_vector(candidate, len(problem.target))
        if x is None:
            return Score(UNPARSEABLE, False, f"not a vector of {len(problem.target)} numbers")
        gradient = [2 * (t - xi) for xi, t in zip(x, problem.target, strict=True)]
        value = -sum((g / 2) ** 2 for g in gradient)
        text = f"score {value:.6g}; gradient of the score at x: {format_vector(gradient)}"
        return Score(value, value >= -TOLERANCE, text)

    def evaluate(self, task: Task, candidate: str) -> Score:
        problem = self._problems[task.id]
        visible = self.score(task, candidate)
        return Score(visible.value, visible.solved, f"target {format_vector(problem.target)}")

    def actor(self, seed: int) -> QuadraticActor:
        """The scripted actor this env runs with when no model is given."""
        from envs.quadratic_actor import QuadraticActor

        return QuadraticActor(seed)


def _task(index: int, problem: Problem) -> Task:
    dim = len(problem.target)
    prompt = (
        f"Find x in R^{dim} that maximises the score s(x) = -||x - t||^2 for a hidden t. "
        f"Answer with a vector like {format_vector([0.0] * dim)}. Step size a = {problem.step}."
    )
    return Task(f"q{index}", prompt, {"dim": dim, "step": problem.step})
