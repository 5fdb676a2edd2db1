"""The loop shared by the designs that learn across tasks (exemplars, insights, cheatsheet,
bank): each is a `Design`, what it shows the model before an attempt and what it learns after
the task, run in one of two loops:

- `sampled`: fresh samples (the greedy answer, then samples at --temperature), the design's
  memory in every prompt, as best-of-N with memory; set against `resample` it measures the memory;
- `reflected`: Reflexion's loop (a reflection after each failed attempt, recalled with the
  design's memory), the design's experience plus the task's own lessons.

    >>> async def nothing(trial, episode): return []
    >>> async def learn_nothing(trial, attempts, episode): return None
    >>> Design("none", nothing, learn_nothing).kind
    'none'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from reflexion.core.protocols import Trial
from reflexion.core.records import Attempt, Recalled

Shown = Callable[[Trial, int], Awaitable[list[Recalled]]]
Learn = Callable[[Trial, list[Attempt], int], Awaitable[None]]


@dataclass(frozen=True)
class Design:
    """A way of learning across tasks: its kind of lesson, what goes into a prompt for an
    episode, and what the task teaches once it is over (given its attempts)."""

    kind: str
    shown: Shown
    learn: Learn


async def sampled(design: Design, trial: Trial) -> None:
    attempts: list[Attempt] = []
    for sample in range(trial.budget):
        episode = sample + 1
        memory = await design.shown(trial, episode)
        call = await trial.ask(trial.actor.generate(trial.task, memory, sample=sample), episode)
        attempts.append(await trial.attempt(call, episode))
        if trial.solved:
            break
    await design.learn(trial, attempts, attempts[-1].episode)


async def reflected(design: Design, trial: Trial) -> None:
    attempts: list[Attempt] = []
    for episode in range(1, trial.budget + 1):
        memory = await design.shown(trial, episode) + await trial.recall(episode)
        call = await trial.ask(trial.actor.generate(trial.task, memory, sample=0), episode)
        attempt = await trial.attempt(call, episode)
        attempts.append(attempt)
        if trial.solved or episode == trial.budget:
            break
        reflection = await trial.ask(trial.actor.reflect(trial.task, attempt), episode)
        await trial.remember(reflection, attempt)
    await design.learn(trial, attempts, attempts[-1].episode)


def both(design: Design) -> tuple[Callable[[Trial], Awaitable[None]], ...]:
    """The design's two strategies: sampled, and combined with Reflexion's reflections."""

    async def alone(trial: Trial) -> None:
        await sampled(design, trial)

    async def with_reflexion(trial: Trial) -> None:
        await reflected(design, trial)

    return alone, with_reflexion
