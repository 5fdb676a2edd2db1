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

from collections.abc import Sequence

from envs.quadratic.actor import QuadraticActor
from envs.quadratic.problems import (
    TOLERANCE,
    UNPARSEABLE,
    Problem,
    format_vector,
    make_problems,
    parse_vector,
)
from reflexion.core.errors import UsageError
from reflexion.core.records import Score, Task


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
        return QuadraticActor(seed)


def _task(index: int, problem: Problem) -> Task:
    dim = len(problem.target)
    prompt = (
        f"Find x in R^{dim} that maximises the score s(x) = -||x - t||^2 for a hidden t. "
        f"Answer with a vector like {format_vector([0.0] * dim)}. Step size a = {problem.step}."
    )
    return Task(f"q{index}", prompt, {"dim": dim, "step": problem.step})
