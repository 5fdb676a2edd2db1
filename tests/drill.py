"""One trial of the quadratic drill, with the scripted actor and any memory (shared by tests)."""

from __future__ import annotations

import asyncio

from envs.quadratic import Problem, QuadraticEnv
from reflexion.core.protocols import Memory
from reflexion.core.records import Step
from reflexion.runner.config import RunConfig
from reflexion.strategies import STRATEGIES
from reflexion.trial.recorded import RecordedTrial


def run_trial(
    strategy: str, problem: Problem, budget: int, seed: int, memory: Memory | None = None
) -> tuple[RecordedTrial, list[Step]]:
    env = QuadraticEnv([problem])
    steps: list[Step] = []
    spec = STRATEGIES[strategy]
    trial = RecordedTrial(
        RunConfig(run_id="run", episodes=budget),
        strategy,
        env,
        env.tasks()[0],
        env.actor(seed),
        seed,
        steps.append,
        memory if spec.memory is not None else None,
    )
    asyncio.run(spec.run(trial))
    return trial, steps
