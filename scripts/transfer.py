"""Do lessons carry across tasks? Learn on one set of tasks, then run a disjoint set twice: once
starting from the learned memory (a copy: it stays as it was) and once from an empty one.

All three runs are `reflexion` in an ordered stream (`--order stream`) with global recall
(`--scope global`): one task at a time, and each task may recall the lessons of every task before
it, including, in the second run, the learned ones. Prints the paired comparison of the two runs
on the test tasks, and success by position in the stream: does it rise as lessons pile up?
Resumable: run the same command again to finish.

    .venv/bin/python scripts/transfer.py --env constrained:40 --learn 20
    .venv/bin/python scripts/transfer.py --env humaneval:spread-40 --learn 20 --out runs/tr-he
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from envs import make_env
from reflexion import Env, ReflexionError, RunConfig, Score, Task, TaskResult, run
from reflexion.models import DEFAULT_MODEL
from reflexion.report import arm, bootstrap_mean, format_pairs, pair


class Subset:
    """Some of an env's tasks, under the env's own name (so its lessons are recalled as the
    env's); everything else is the env's."""

    def __init__(self, env: Env, tasks: Sequence[Task]) -> None:
        self.env, self._tasks, self.name = env, list(tasks), env.name

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        return self.env.score(task, candidate)

    def evaluate(self, task: Task, candidate: str) -> Score:
        return self.env.evaluate(task, candidate)

    def __getattr__(self, name: str) -> Any:  # sandbox(), test_subject(), ...
        return getattr(self.env, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--env", default="constrained:40")
    parser.add_argument("--learn", type=int, default=20, help="tasks to learn on (the first N)")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", default="runs/transfer")
    args = parser.parse_args()
    out = Path(args.out)
    try:
        env = make_env(args.env)
        tasks = list(env.tasks())
        if not 0 < args.learn < len(tasks):
            sys.exit(f"transfer: error: --learn must be between 1 and {len(tasks) - 1}")
        learn, test = Subset(env, tasks[: args.learn]), Subset(env, tasks[args.learn :])
        start = time.perf_counter()
        run_arms(args, learn, test)
    except ReflexionError as exc:
        sys.exit(f"transfer: error: {exc}")
    empty = arm(out / "empty", "reflexion", "empty memory")
    learned = arm(out / "with", "reflexion", "learned memory")
    print(
        f"\ntransfer on {args.env}: learn on {len(learn.tasks())} tasks, test on "
        f"{len(test.tasks())} ({time.perf_counter() - start:.0f} s this call)\n"
    )
    print(format_pairs([pair([*empty, *learned], "empty memory", "learned memory")]))
    print_scores(empty, learned)
    arms = {"empty memory": empty, "learned memory": learned}
    print_positions([t.id for t in test.tasks()], arms, "final success", final_passed)
    print_positions([t.id for t in test.tasks()], arms, "final visible score", final_score)


def run_arms(args: argparse.Namespace, learn: Subset, test: Subset) -> None:
    """Learn on the first tasks into a store, then test on the rest with a copy of it and with
    an empty memory."""
    out = Path(args.out)
    base = RunConfig(
        env=args.env,
        strategies=("reflexion",),
        episodes=args.episodes,
        model=args.model,
        scope="global",
        order="stream",
        concurrency=1,
    )
    store = str(out / "store")
    run(replace(base, out=str(out / "learn"), memory=store), env=learn, progress=True)
    run(
        replace(base, out=str(out / "with"), memory=store, memory_mode="copy"),
        env=test,
        progress=True,
    )
    run(replace(base, out=str(out / "empty")), env=test, progress=True)


def final_passed(result: TaskResult) -> float:
    return float(result.final_passed)


def final_score(result: TaskResult) -> float:
    """The visible score of the trial's last attempt (e.g. concept coverage)."""
    return result.curve[-1].score if result.curve else 0.0


def print_scores(empty: list[TaskResult], learned: list[TaskResult]) -> None:
    """The paired difference in final visible score: finer than pass/fail where few pass."""
    a = {r.task_id: final_score(r) for r in empty}
    b = {r.task_id: final_score(r) for r in learned}
    diffs = [b[t] - a[t] for t in sorted(a.keys() & b.keys())]
    if not diffs:
        return
    d = bootstrap_mean(diffs)
    up, down = sum(x > 1e-9 for x in diffs), sum(x < -1e-9 for x in diffs)
    print(
        f"\nfinal visible score, paired: empty {np.mean([a[t] for t in b if t in a]):.3f}, "
        f"learned {np.mean([b[t] for t in a if t in b]):.3f}; learned - empty {d.value:+.3f} "
        f"[{d.low:+.3f}, {d.high:+.3f}], higher on {up}, lower on {down}, "
        f"same on {len(diffs) - up - down}"
    )


def print_positions(
    order: list[str],
    arms: dict[str, list[TaskResult]],
    what: str,
    value: Callable[[TaskResult], float],
) -> None:
    """A mean by quarter of the stream: does it rise with the lessons behind it?"""
    quarters = [order[i * len(order) // 4 : (i + 1) * len(order) // 4] for i in range(4)]
    print(f"\n{what} by position in the stream (quarters of the test tasks)")
    print("memory          " + "".join(f"  Q{i + 1} ({len(q)})" for i, q in enumerate(quarters)))
    for name, results in arms.items():
        values = {r.task_id: value(r) for r in results}
        cells = [sum(values.get(t, 0.0) for t in q) / max(len(q), 1) for q in quarters]
        print(f"{name:<16}" + "".join(f"{c:9.2f}" for c in cells))


if __name__ == "__main__":
    main()
