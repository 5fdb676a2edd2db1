"""A scripted actor for the quadratic env: every role is a few lines of arithmetic on text.

It reads only what an LLM actor would see (the task, the visible score's feedback, recalled
lessons) and writes text, so the strategies run on it unchanged. Its calls are not LLM calls.

    >>> import asyncio
    >>> from envs.quadratic import QuadraticEnv
    >>> task = QuadraticEnv().tasks()[0]
    >>> asyncio.run(QuadraticActor(seed=0).generate(task, (), sample=0)).output.startswith("[")
    True
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Sequence

from envs.quadratic.problems import format_vector, gradient_step, parse_vector
from reflexion.core.lesson_records import Recalled
from reflexion.core.records import Attempt, Call, Message, Task, Turn

NEXT = re.compile(r"next x = (\[[^\]]*\])", re.IGNORECASE)
GRADIENT = re.compile(r"gradient of the score at x: (\[[^\]]*\])")


class QuadraticActor:
    def __init__(self, seed: int = 0, noise: float = 0.5) -> None:
        self.seed = seed
        self.noise = noise  # spread of a fresh guess and of a generic "correction"

    def _rng(self, task: Task, salt: int) -> random.Random:
        return random.Random(f"{self.seed}/{zlib.crc32(task.id.encode())}/{salt}")

    async def generate(self, task: Task, lessons: Sequence[Recalled], sample: int) -> Call:
        """Start from the point the best recalled lesson proposes, else from a fresh guess."""
        dim = int(task.spec["dim"])
        own = [r.reflection for r in lessons if r.reflection.task_id == task.id]
        proposals = [(r.score, _next_point(r.text, dim)) for r in own]
        usable = [(s, x) for s, x in proposals if x is not None]
        if usable:
            x = max(usable, key=lambda sx: sx[0])[1]
        else:
            rng = self._rng(task, sample)
            x = [rng.gauss(0.0, self.noise) for _ in range(dim)]
        text = task.prompt + "".join(f"\nLesson: {r.reflection.text}" for r in lessons)
        return _call("generate", text, format_vector(x))

    async def feedback(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call:
        last = history[-1].attempt
        step, next_x = self._step(task, last)
        if next_x is None:
            return _call("feedback", last.score.feedback, "No gradient to follow.\nSTOP")
        out = f"Follow the gradient with step a = {step}: next x = {format_vector(next_x)}"
        if next_x == parse_vector(last.candidate, len(next_x)):
            out += "\nSTOP"  # subtle: a zero gradient leaves nothing to refine
        return _call("feedback", last.score.feedback, out)

    async def refine(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call:
        dim = int(task.spec["dim"])
        last = history[-1]
        if last.feedback is None:  # `retry`: no feedback written; step along the result's gradient
            x = self._step(task, last.attempt)[1] or parse_vector(last.attempt.candidate, dim)
            return _call("refine", last.attempt.score.feedback, format_vector(x or [0.0] * dim))
        x = _next_point(last.feedback, dim) or parse_vector(last.attempt.candidate, dim)
        return _call("refine", last.feedback, format_vector(x or [0.0] * dim))

    async def correct(self, task: Task, history: Sequence[Turn]) -> Call:
        """Generic correction has no signal to follow: perturb the last answer at random."""
        dim = int(task.spec["dim"])
        last = parse_vector(history[-1].attempt.candidate, dim) or [0.0] * dim
        rng = self._rng(task, 1000 + len(history))
        x = [v + rng.gauss(0.0, self.noise / 2) for v in last]
        return _call("correct", "There might be an error; correct it.", format_vector(x))

    async def reflect(self, task: Task, attempt: Attempt) -> Call:
        step, next_x = self._step(task, attempt)
        if next_x is None:
            out = f"x = {attempt.candidate} was not a valid answer; answer with {task.spec['dim']}"
            return _call("reflect", attempt.score.feedback, out + " numbers.")
        out = (
            f"x = {attempt.candidate} scored {attempt.score.value:.6g}. Following the gradient "
            f"with step a = {step}: next x = {format_vector(next_x)}"
        )
        return _call("reflect", attempt.score.feedback, out)

    def _step(self, task: Task, attempt: Attempt) -> tuple[float, list[float] | None]:
        dim, step = int(task.spec["dim"]), float(task.spec["step"])
        x = parse_vector(attempt.candidate, dim)
        match = GRADIENT.search(attempt.score.feedback)
        gradient = parse_vector(match.group(1), dim) if match else None
        if x is None or gradient is None:
            return step, None
        return step, gradient_step(x, gradient, step)


def _next_point(text: str, dim: int) -> list[float] | None:
    match = NEXT.search(text)
    return parse_vector(match.group(1), dim) if match else None


def _call(role: str, prompt: str, output: str) -> Call:
    return Call(role=role, prompt=(Message("human", prompt),), output=output, llm=False)
