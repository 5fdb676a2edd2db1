"""What the runner itself costs, with no real model in the way (no GPU or network needed).

1. Overhead per model call: `self-refine` trials against a model that answers at once, against
   the same number of bare `ainvoke` calls of that model. Goal: under 1 ms per call.
2. Concurrency: a model that takes 200 ms per call (an asyncio sleep: a remote server busy
   elsewhere), at --concurrency 1, 8, 32 and 64, against the ideal critical path (every trial's
   calls back to back, `concurrency` trials at a time). Goal: at most 1.2x.

    .venv/bin/python scripts/benchmark_runner.py
"""

from __future__ import annotations

import asyncio
import math
import tempfile
import time
from pathlib import Path

from reflexion import RunConfig, Score, Task, run
from reflexion.models import FixedChatModel

EPISODES = 4  # self-refine: 4 answers and 3 feedbacks, 7 calls per trial (nothing is solved)
CALLS = 2 * EPISODES - 1


class Unsolvable:
    """`count` distinct tasks (so no greedy call is shared) that no answer solves."""

    name = "unsolvable"

    def __init__(self, count: int) -> None:
        self._tasks = [Task(f"t{i}", f"Task number {i}: write the word yes.") for i in range(count)]

    def tasks(self) -> list[Task]:
        return self._tasks

    def score(self, task: Task, candidate: str) -> Score:
        return Score(0.0, False, "not yet")

    def evaluate(self, task: Task, candidate: str) -> Score:
        return Score(0.0, False, "no")


def timed_run(trials: int, delay_s: float, concurrency: int, folder: Path) -> tuple[float, int]:
    """Wall seconds of one `run` and the model calls it made."""
    config = RunConfig(
        strategies=("self-refine",), episodes=EPISODES, concurrency=concurrency, out=str(folder)
    )
    model = FixedChatModel(reply="no", delay_s=delay_s)
    start = time.perf_counter()
    results = run(config, env=Unsolvable(trials), model=model, report=False)  # the runner alone
    return time.perf_counter() - start, sum(r.llm_calls for r in results)


def bare_calls(count: int) -> float:
    """Wall seconds of `count` bare ainvoke calls of the same model, one after another."""
    model = FixedChatModel(reply="no", delay_s=0.0)

    async def calls() -> None:
        for _ in range(count):
            await model.ainvoke("Task number 1: write the word yes.")

    start = time.perf_counter()
    asyncio.run(calls())
    return time.perf_counter() - start


def overhead(folder: Path, trials: int = 300) -> None:
    wall, calls = timed_run(trials, 0.0, 1, folder / "overhead")
    bare = bare_calls(calls)
    per_call = (wall - bare) / calls * 1000
    print(f"1. overhead per model call ({trials} self-refine trials, {calls} calls, zero latency)")
    print(f"   through the runner {wall:6.2f} s   bare ainvoke calls {bare:6.2f} s")
    print(f"   ratio {wall / bare:.2f}x, runner overhead {per_call:.2f} ms per call (goal < 1 ms)")


def concurrency(folder: Path, delay_s: float = 0.2, waves: int = 4) -> None:
    print(f"2. wall time vs the ideal critical path ({delay_s * 1000:.0f} ms per call, {waves}")
    print(f"   trials per slot, {CALLS} calls per trial; goal <= 1.2x)")
    print("   concurrency  trials    calls    wall s   ideal s   ratio")
    for slots in (1, 8, 32, 64):
        trials = waves * slots
        wall, calls = timed_run(trials, delay_s, slots, folder / f"c{slots}")
        ideal = math.ceil(trials / slots) * CALLS * delay_s
        print(
            f"   {slots:11d} {trials:7d} {calls:8d} {wall:9.2f} {ideal:9.2f} {wall / ideal:7.2f}x"
        )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        overhead(Path(tmp))
        concurrency(Path(tmp))


if __name__ == "__main__":
    main()
