"""Running a run's trials concurrently, under its token and time budget.

>>> trials = Trials(config, env, actor_for, memories, budget.tap(folder.write_step))
>>> cut = asyncio.run(run_jobs(jobs, trials, folder, budget, progress=False))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reflexion.budget import Budget
from reflexion.protocols import Actor, Env, Memory
from reflexion.records import Step, Task, TaskResult
from reflexion.runfolder import RunFolder
from reflexion.strategies import RUNS, Strategy
from reflexion.trial import Trial

if TYPE_CHECKING:
    from reflexion.runner import RunConfig


@dataclass(frozen=True)
class Trials:
    """What every trial of a run shares; `sink` writes (and charges) its trace steps."""

    config: RunConfig
    env: Env
    actor_for: Callable[[int], Actor]
    memories: dict[Strategy, Memory]
    sink: Callable[[Step], None]

    async def run(self, strategy: Strategy, task: Task, seed: int) -> TaskResult:
        c = self.config
        trial = Trial(
            c.run_id,
            strategy.value,
            self.env,
            task,
            self.actor_for(seed),
            seed,
            c.episodes,
            self.sink,
            self.memories.get(strategy),
            k=c.k,
            scope=c.scope,
        )
        await RUNS[strategy](trial)
        return trial.result()


async def run_jobs(
    jobs: list[tuple[Strategy, Task, int]],
    trials: Trials,
    folder: RunFolder,
    budget: Budget,
    progress: bool,
) -> bool:
    """Run every job; True if the budget ran out first. Then every trial not finished is
    cancelled, its partial trace left for the next resume to set aside."""
    gate = asyncio.Semaphore(trials.config.concurrency)
    bar = _progress_bar(len(jobs), progress)

    async def one(strategy: Strategy, task: Task, seed: int) -> None:
        async with gate:
            folder.write_result(await trials.run(strategy, task, seed))
            bar.update(1)

    tasks = [asyncio.ensure_future(one(*job)) for job in jobs]

    def cancel_all() -> None:
        for t in tasks:
            t.cancel()

    budget.on_spent(cancel_all)
    clock = asyncio.ensure_future(budget.clock())
    try:
        await asyncio.gather(*tasks)  # our bugs raise
    except asyncio.CancelledError:
        if budget.spent is None:
            raise  # we were cancelled ourselves (Ctrl-C)
        await asyncio.gather(*tasks, return_exceptions=True)  # let the trials unwind
        return True
    finally:
        clock.cancel()
        cancel_all()  # e.g. after our bug in one trial: leave no other trial running
        bar.close()
    return False


def _progress_bar(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc="trials", unit="trial", disable=not enabled or total == 0)
