"""Do lessons carry across tasks? Learn on part A of an env's tasks, then run a disjoint part B
twice with the memory frozen: once reading the learned store, once an empty one.

The split is made by task position before any run: `--split parity` (the default) lets the tasks
at even positions of the env's task list learn and tests the odd ones; `--split first-N` learns
on the first N (`--learn N` says the same). OUT/split.json records the two id lists.

Part A runs `--strategy` (any strategy that keeps lessons in the run's memory: reflexion,
exemplars, insights, cheatsheet, bank, reflexion+...) in an ordered stream with global recall,
each task recalling the lessons of the tasks before it, into OUT/store. Both part-B runs are
frozen (`frozen_memory`: recall only, nothing stored or changed), so they differ in their starting
memory alone: a cold run that kept its own lessons would learn on part B, which the frozen warm
one cannot. `--test-model` runs part B with another model than the one that learned, e.g. memory
learned by the 1.5B model used by the 0.5B one (MemP's transfer); a comma-separated list runs part
B on each model in turn, from the one learned store (the first model's runs are OUT/with and
OUT/empty, another's OUT/with.MODEL and OUT/empty.MODEL). Prints, for each part-B model, the paired
comparison of its two runs, then the learned lessons by kind, and means by position in the stream.
Resumable: run the same command again to finish; a model added to --test-model runs only its own
part B.

    .venv/bin/python scripts/transfer.py --env constrained:40
    .venv/bin/python scripts/transfer.py --env game24:100 --strategy insights \\
        --episodes 1 --test-model qwen2.5-coder-1.5b,qwen2.5-coder-0.5b --out runs/tr-g24
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from envs import make_env
from memory import ChromaMemory, embedder_for
from reflexion import (
    STRATEGIES,
    Env,
    ReflexionError,
    RunConfig,
    Score,
    Task,
    TaskResult,
    UsageError,
    run,
)
from reflexion.models import DEFAULT_MODEL, check_model_name
from reflexion.report import arm, bootstrap_mean, format_pairs, pair
from reflexion.strategies import RUN_MEMORY

FIRST_N = re.compile(r"first-(\d+)")
SLUG = re.compile(r"[^A-Za-z0-9._-]+")  # a model's name as part of a folder's


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

    def __getattr__(self, name: str) -> Any:  # sandbox(), test_subject(), actor(), ...
        return getattr(self.env, name)


@dataclass(frozen=True)
class Split:
    """Part A (learn) and part B (test), chosen by position in the env's task list."""

    how: str
    learn: list[Task]
    test: list[Task]


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, as for every other bad input
        fail(message)


def fail(message: str) -> NoReturn:
    print(f"transfer: error: {message}", file=sys.stderr)
    sys.exit(2)


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = Parser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--env", default="constrained:40")
    parser.add_argument("--strategy", default="reflexion", help="one that keeps lessons")
    parser.add_argument("--split", help="parity (default) or first-N")
    parser.add_argument("--learn", type=int, help="the same as --split first-N")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument(
        "--model", help=f"learns on part A (default {DEFAULT_MODEL}, or the env's scripted actor)"
    )
    parser.add_argument(
        "--test-model", help="runs part B; several, comma-separated, run it each (default: --model)"
    )
    parser.add_argument("--embedder", help="the memory's embedder (default: the run's default)")
    parser.add_argument("--out", default="runs/transfer")
    args = parser.parse_args(argv)
    if args.split is not None and args.learn is not None:
        fail("give --split or --learn, not both")
    if args.learn is not None:
        args.split = f"first-{args.learn}"
    args.split = args.split or "parity"
    keeping = [s.name for s in STRATEGIES.values() if s.memory == RUN_MEMORY]
    if args.strategy not in keeping:
        fail(f"--strategy must keep lessons in the store: one of {', '.join(keeping)}")
    if args.episodes < 1:
        fail("--episodes must be at least 1")
    if args.test_model is not None:
        names = [m.strip() for m in args.test_model.split(",")]
        if not all(names) or len(set(names)) < len(names):
            fail(f"--test-model needs distinct model names, comma-separated: {args.test_model!r}")
        args.test_model = names
    try:  # every name now, not after part A's hours
        for flag, name in [("--model", args.model), *(("--test-model", n) for n in names_of(args))]:
            if name is not None:
                check_model_name(name, flag)
    except ReflexionError as exc:
        fail(str(exc))
    if Path(args.out).exists() and not Path(args.out).is_dir():
        fail(f"--out {args.out} is a file, not a folder")
    return args


def names_of(args: argparse.Namespace) -> list[str]:
    return list(args.test_model or [])


def split_tasks(tasks: Sequence[Task], how: str) -> Split:
    """Part A and part B, by position in `tasks` (the env's list), before any run.

    >>> split_tasks([Task(f"t{i}", "") for i in range(5)], "parity").test
    [Task(id='t1', prompt='', spec={}), Task(id='t3', prompt='', spec={})]
    """
    if how == "parity":
        why = "even positions of the env's task list learn, odd ones are tested"
        return Split(f"parity ({why})", list(tasks[::2]), list(tasks[1::2]))
    first = FIRST_N.fullmatch(how)
    if first is None:
        msg = f"--split must be parity or first-N (e.g. first-20), not {how!r}"
        raise UsageError(msg)
    n = int(first.group(1))
    if not 0 < n < len(tasks):
        msg = f"--split first-N (or --learn N) needs N between 1 and {len(tasks) - 1}, not {n}"
        raise UsageError(msg)
    why = f"the first {n} tasks learn, the rest are tested"
    return Split(f"first-{n} ({why})", list(tasks[:n]), list(tasks[n:]))


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    out = Path(args.out)
    try:
        env = make_env(args.env)
        split = split_tasks(env.tasks(), args.split)
        learn, tests = configs(args, env)
        record_split(out, split)
        print_plan(args, split, learn, [warm for warm, _ in tests])
        start = time.perf_counter()
        learn_part(learn, Subset(env, split.learn))
        for warm, cold in tests:
            test_part(warm, cold, Subset(env, split.test))
    except ReflexionError as exc:
        fail(str(exc))
    print(f"\n{time.perf_counter() - start:.0f} s this call; {format_kinds(out / 'store')}")
    order = [t.id for t in split.test]
    for warm, cold in tests:
        empty = arm(Path(str(cold.out)), args.strategy, "empty memory")
        learned = arm(Path(str(warm.out)), args.strategy, "learned memory")
        print(f"\npart B run by {warm.model or 'the scripted actor'}:")
        print(format_pairs([pair([*empty, *learned], "empty memory", "learned memory")]))
        print_scores(empty, learned)
        arms = {"empty memory": empty, "learned memory": learned}
        print_positions(order, arms, "final success", final_passed)
        print_positions(order, arms, "final visible score", final_score)


def configs(
    args: argparse.Namespace, env: Env
) -> tuple[RunConfig, list[tuple[RunConfig, RunConfig]]]:
    """The part-A run's config, and for each part-B model its two frozen runs' configs: warm
    (the learned store; OUT/with, or OUT/with.MODEL after the first model) and cold (an empty
    store in OUT/empty[.MODEL]/memory, which stays empty)."""
    # an env that brings its own actor (the quadratic drill) needs no model
    model = args.model or (None if callable(getattr(env, "actor", None)) else DEFAULT_MODEL)
    learn = RunConfig(
        env=args.env,
        strategies=(args.strategy,),
        episodes=args.episodes,
        model=model,
        scope="global",
        order="stream",
        concurrency=1,
        out=str(Path(args.out) / "learn"),
        memory=str(Path(args.out) / "store"),
    )
    if args.embedder:
        embedder_for(args.embedder)  # a bad name fails here, before split.json is written
        learn = replace(learn, embedder=args.embedder)
    tests = []
    for n, name in enumerate(args.test_model or [model]):
        suffix = "" if n == 0 else f".{SLUG.sub('-', name)}"
        warm = replace(learn, model=name, frozen_memory=True, out=f"{args.out}/with{suffix}")
        tests.append((warm, replace(warm, out=f"{args.out}/empty{suffix}", memory=None)))
    return learn, tests


def record_split(out: Path, split: Split) -> None:
    """OUT/split.json: the two id lists. A resume with another split is refused, before any run
    (the runs' folders hold the first split's trials)."""
    ids = {"learn": [t.id for t in split.learn], "test": [t.id for t in split.test]}
    path = out / "split.json"
    try:
        before = json.loads(path.read_text()) if path.exists() else ids
    except ValueError:
        msg = f"{path} is not a split this script wrote: give a new --out"
        raise UsageError(msg) from None
    if before != ids:
        msg = f"{out} holds runs of another split ({path}): give the same --split, or a new --out"
        raise UsageError(msg)
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ids, indent=1) + "\n")


def print_plan(
    args: argparse.Namespace, split: Split, learn: RunConfig, tests: Sequence[RunConfig]
) -> None:
    """What runs, before it runs: the split, the models, and that part B is frozen."""
    out = Path(args.out)
    actor = "the env's scripted actor"
    print(
        f"transfer on {args.env} with {args.strategy}: split {split.how}: part A {len(split.learn)}"
        f" tasks, part B {len(split.test)} (ids in {out / 'split.json'})\n"
        f"part A learned by {learn.model or actor} into {learn.memory}; part B run by "
        f"{' and by '.join(t.model or actor for t in tests)} twice, with FROZEN memory (recall "
        "only, nothing stored): the learned store vs an empty one"
    )


def learn_part(config: RunConfig, learn: Subset) -> None:
    """Part A: the strategy learns in a stream into the store."""
    run(config, env=learn, progress=True)


def test_part(warm: RunConfig, cold: RunConfig, test: Subset) -> None:
    """Part B on one model, frozen: from the learned store, and from an empty one."""
    run(warm, env=test, progress=True)
    run(cold, env=test, progress=True)


def lessons_by_kind(store: Path) -> Counter[str]:
    """How many lessons of each kind the store holds (none when it does not exist yet)."""
    if not store.exists():
        return Counter()
    with ChromaMemory.open(store) as memory:
        return Counter(r.kind for r in memory.reflections())


def format_kinds(store: Path) -> str:
    kinds = lessons_by_kind(store)
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
    return f"the learned memory holds {sum(kinds.values())} lessons ({counts or 'none'})"


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
