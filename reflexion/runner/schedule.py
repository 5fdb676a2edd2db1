"""Running a run's trials concurrently, under its token and time budget.

>>> trials = Trials(plan, budget.tap(folder.write_step))                      # doctest: +SKIP
>>> cut = asyncio.run(run_jobs(jobs, trials, folder, budget, progress=False))  # doctest: +SKIP

--order stream runs one task at a time, in the env's order or in one shuffle of it:

>>> stream_order(["q0", "q1", "q2", "q3", "q4"], seed=3)
['q0', 'q2', 'q3', 'q4', 'q1']
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from reflexion.core.records import Step, Task, TaskResult
from reflexion.core.runfolder import RunFolder
from reflexion.runner.budget import Budget
from reflexion.runner.setup import Prepared
from reflexion.trial.gate import Replay
from reflexion.trial.recorded import RecordedTrial, TokenBudgetSpent

Job = tuple[str, str, int]  # strategy, task id, seed


class TrialRunner(Protocol):
    """What runs one trial: `Trials` here, or `RayTrials` on a cluster (runner.cluster)."""

    @property
    def plan(self) -> Prepared: ...

    @property
    def tasks(self) -> dict[str, Task]: ...

    async def run(self, strategy: str, task_id: str, seed: int) -> TaskResult: ...


@dataclass(frozen=True)
class Trials:
    """What every trial of a run shares; `sink` writes (and charges) its trace steps."""

    plan: Prepared
    sink: Callable[[Step], None]
    tasks: dict[str, Task] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", {t.id: t for t in self.plan.tasks})

    async def run(self, strategy: str, task_id: str, seed: int) -> TaskResult:
        p = self.plan
        memory = p.memories.get(strategy)
        trial = RecordedTrial(
            p.config,  # the run's settings, the same for each of its trials
            strategy,
            p.env,
            self.tasks[task_id],
            p.actor_for(seed),
            seed,
            self.sink,
            memory,
            replay=self._replay(strategy, task_id),
        )
        try:
            await trial.write_self_tests()
            await p.strategies[strategy].run(trial)
        except TokenBudgetSpent:
            pass  # the strategy stopped at the trial's token budget; its best stands
        return trial.result()

    def _replay(self, strategy: str, task_id: str) -> Replay | None:
        """--gate K: the stream's tasks before this one, and what the strategy shows a first
        attempt (None: no gate, or a strategy that keeps no lessons)."""
        p = self.plan
        first = p.strategies[strategy].first
        if not p.config.gate or first is None:
            return None
        order = list(p.saved.get("stream_order") or ())
        earlier = order[: order.index(task_id)] if task_id in order else []
        tasks = tuple(self.tasks[t] for t in earlier)
        shows = p.strategies[strategy].shows
        return Replay(p.config.gate, tasks, first, shows, p.config.gate_rule)


def stream_order(task_ids: Sequence[str], seed: int | None) -> list[str]:
    """The order --order stream runs its tasks in: the env's (`seed` None), or one shuffle of it
    by `seed`, the same for every strategy of the run.

    >>> stream_order(["q0", "q1", "q2"], None)
    ['q0', 'q1', 'q2']
    """
    order = list(task_ids)
    if seed is not None:
        # subtle: Random(int).shuffle gives the same order on every Python 3 version and machine
        random.Random(seed).shuffle(order)
    return order


async def _in_task_order(
    jobs: list[Job], order: Sequence[str], one: Callable[[str, str, int], Awaitable[None]]
) -> None:
    """--order stream: the jobs of one task at a time, in `order`; within a task, its
    strategies and seeds run concurrently."""
    for task_id in order:
        group = [asyncio.ensure_future(one(*job)) for job in jobs if job[1] == task_id]
        try:
            await asyncio.gather(*group)
        except BaseException:  # a bug in one trial, or we were cancelled: stop its siblings
            for trial in group:
                trial.cancel()
            await asyncio.gather(*group, return_exceptions=True)
            raise


async def run_jobs(
    jobs: list[Job],
    trials: TrialRunner,
    folder: RunFolder,
    budget: Budget,
    progress: bool,
    stream: Sequence[str] | None = None,
) -> bool:
    """Run every job; True if the budget ran out first. Then every trial not finished is
    cancelled, its partial trace left for the next resume to set aside. With `stream` (every
    task id, in order: --order stream) one task's jobs run at a time, else all at once."""
    gate = asyncio.Semaphore(trials.plan.config.concurrency)
    bar = _progress_bar(len(jobs), progress)

    async def one(strategy: str, task_id: str, seed: int) -> None:
        async with gate:
            folder.write_result(await trials.run(strategy, task_id, seed))
            bar.update(1)

    if stream is not None:
        tasks = [asyncio.ensure_future(_in_task_order(jobs, stream, one))]
    else:
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
