"""Do lessons carry across tasks? Learn on part A of an env's tasks, then run a disjoint part B
twice with the memory frozen: once reading the learned store, once an empty one.

The split is made by task position before any run: `parity` (the default) lets the tasks at
even positions of the env's task list learn and tests the odd ones; `first-N` learns on the
first N. OUT/split.json records the two id lists.

Part A runs the strategy (any that keeps lessons in the run's memory: reflexion, exemplars,
insights, cheatsheet, bank, reflexion+...) in an ordered stream with global recall, each task
recalling the lessons of the tasks before it, into OUT/store. Both part-B runs are frozen
(`frozen_memory`: recall only, nothing stored or changed), so they differ in their starting
memory alone: a cold run that kept its own lessons would learn on part B, which the frozen warm
one cannot. Part B may run on other models than the one that learned (MemP's transfer), each in
turn from the one learned store: the first model's runs are OUT/with and OUT/empty, another's
OUT/with.MODEL and OUT/empty.MODEL. Resumable: the same request again finishes what is left, and
a model added to the part-B models runs only its own part B.

    >>> plan = prepare(Transfer(env="quadratic", split="first-3", out="runs/tr"))  # doctest: +SKIP
    >>> run_plan(plan, run_part)                                                 # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from envs import make_env
from memory import ChromaMemory, embedder_for
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Order
from reflexion.core.protocols import Env
from reflexion.core.records import Score, Task
from reflexion.models import DEFAULT_MODEL, check_model_name
from reflexion.runner.config import RunConfig
from reflexion.strategies import RUN_MEMORY, STRATEGIES

FIRST_N = re.compile(r"first-(\d+)")
SLUG = re.compile(r"[^A-Za-z0-9._-]+")  # a model's name as part of a folder's
RunPart = Callable[[RunConfig, Env], object]  # runs (or resumes) one part's run folder


@dataclass(frozen=True)
class Transfer:
    """What to run: the env, the strategy that learns, the split, the episodes a task, the model
    that learns (None: the default, or the env's scripted actor), the part-B models (none: the
    learner), the memory's embedder (None: the run's default) and the output folder."""

    env: str = "constrained:40"
    strategy: str = "reflexion"
    split: str = "parity"
    episodes: int = 3
    model: str | None = None
    test_models: tuple[str, ...] = ()
    embedder: str | None = None
    out: str = "runs/transfer"


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


@dataclass(frozen=True)
class Plan:
    """A checked transfer: the env, its split, the part-A run's config, and for each part-B
    model its two frozen runs' configs (warm: the learned store; cold: an empty one)."""

    transfer: Transfer
    env: Env
    split: Split
    learn: RunConfig
    tests: tuple[tuple[RunConfig, RunConfig], ...]


def split_of(split: str | None, learn: int | None) -> str:
    """The split from --split and --learn N (the same as --split first-N).

    >>> split_of(None, None), split_of(None, 20)
    ('parity', 'first-20')
    """
    if split is not None and learn is not None:
        msg = "give --split or --learn, not both"
        raise UsageError(msg)
    return f"first-{learn}" if learn is not None else split or "parity"


def models_of(text: str | None) -> tuple[str, ...]:
    """The part-B models from a comma-separated list; none when it is not given.

    >>> models_of("a, b"), models_of(None)
    (('a', 'b'), ())
    """
    if text is None:
        return ()
    names = [m.strip() for m in text.split(",")]
    if not all(names) or len(set(names)) < len(names):
        msg = f"--test-model needs distinct model names, comma-separated: {text!r}"
        raise UsageError(msg)
    return tuple(names)


def check(t: Transfer) -> None:
    """Refuse a request that cannot run, before anything is written: every model name is
    checked now, not after part A's hours."""
    keeping = [s.name for s in STRATEGIES.values() if s.memory == RUN_MEMORY]
    if t.strategy not in keeping:
        msg = f"--strategy must keep lessons in the store: one of {', '.join(keeping)}"
        raise UsageError(msg)
    if t.episodes < 1:
        msg = "--episodes must be at least 1"
        raise UsageError(msg)
    for flag, name in [("--model", t.model), *(("--test-model", n) for n in t.test_models)]:
        if name is not None:
            check_model_name(name, flag)
    if Path(t.out).exists() and not Path(t.out).is_dir():
        msg = f"--out {t.out} is a file, not a folder"
        raise UsageError(msg)


def split_tasks(tasks: Sequence[Task], how: str) -> Split:
    """Part A and part B, by position in `tasks` (the env's list), before any run.

    >>> [t.id for t in split_tasks([Task(f"t{i}", "") for i in range(5)], "parity").test]
    ['t1', 't3']
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


def prepare(t: Transfer) -> Plan:
    """Check the request, split the env's tasks, and record the split (OUT/split.json)."""
    check(t)
    env = make_env(t.env)
    split = split_tasks(env.tasks(), t.split)
    learn, tests = configs(t, env)
    record_split(Path(t.out), split)
    return Plan(t, env, split, learn, tests)


def configs(t: Transfer, env: Env) -> tuple[RunConfig, tuple[tuple[RunConfig, RunConfig], ...]]:
    """The part-A run's config, and for each part-B model its two frozen runs' configs: warm
    (the learned store; OUT/with, or OUT/with.MODEL after the first model) and cold (an empty
    store in OUT/empty[.MODEL]/memory, which stays empty)."""
    # an env that brings its own actor (the quadratic drill) needs no model
    model = t.model or (None if callable(getattr(env, "actor", None)) else DEFAULT_MODEL)
    learn = RunConfig(
        env=t.env,
        strategies=(t.strategy,),
        episodes=t.episodes,
        model=model,
        scope="global",
        order=Order.STREAM,
        concurrency=1,
        out=str(Path(t.out) / "learn"),
        memory=str(Path(t.out) / "store"),
    )
    if t.embedder:
        embedder_for(t.embedder)  # a bad name fails here, before split.json is written
        learn = replace(learn, embedder=t.embedder)
    tests = []
    for n, name in enumerate(t.test_models or [model]):
        suffix = "" if n == 0 else f".{SLUG.sub('-', str(name))}"
        warm = replace(learn, model=name, frozen_memory=True, out=f"{t.out}/with{suffix}")
        tests.append((warm, replace(warm, out=f"{t.out}/empty{suffix}", memory=None)))
    return learn, tuple(tests)


def record_split(out: Path, split: Split) -> None:
    """OUT/split.json: the two id lists. A resume with another split is refused, before any run
    (the runs' folders hold the first split's trials)."""
    ids = {"learn": [t.id for t in split.learn], "test": [t.id for t in split.test]}
    path = out / "split.json"
    try:
        before = json.loads(path.read_text()) if path.exists() else ids
    except ValueError:
        msg = f"{path} is not a split a transfer wrote: give a new --out"
        raise UsageError(msg) from None
    if before != ids:
        msg = f"{out} holds runs of another split ({path}): give the same --split, or a new --out"
        raise UsageError(msg)
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ids, indent=1) + "\n")


def plan_text(plan: Plan) -> str:
    """What runs, before it runs: the split, the models, and that part B is frozen."""
    t, split, actor = plan.transfer, plan.split, "the env's scripted actor"
    testers = " and by ".join(warm.model or actor for warm, _ in plan.tests)
    return (
        f"transfer on {t.env} with {t.strategy}: split {split.how}: part A {len(split.learn)}"
        f" tasks, part B {len(split.test)} (ids in {Path(t.out) / 'split.json'})\n"
        f"part A learned by {plan.learn.model or actor} into {plan.learn.memory}; part B run by "
        f"{testers} twice, with FROZEN memory (recall only, nothing stored): the learned store "
        "vs an empty one"
    )


def run_plan(plan: Plan, run: RunPart) -> None:
    """Part A, then each part-B model's two frozen runs, each by `run` (which resumes a folder
    a call before finished, at no cost)."""
    learn_part(plan.learn, Subset(plan.env, plan.split.learn), run)
    for warm, cold in plan.tests:
        frozen_part(warm, cold, Subset(plan.env, plan.split.test), run)


def learn_part(config: RunConfig, learn: Subset, run: RunPart) -> None:
    """Part A: the strategy learns in a stream into the store."""
    run(config, learn)


def frozen_part(warm: RunConfig, cold: RunConfig, test: Subset, run: RunPart) -> None:
    """Part B on one model, frozen: from the learned store, and from an empty one."""
    run(warm, test)
    run(cold, test)


def lessons_by_kind(store: Path) -> Counter[str]:
    """How many lessons of each kind the store holds (none when it does not exist yet)."""
    if not store.exists():
        return Counter()
    with ChromaMemory.open(store) as memory:
        return Counter(r.kind for r in memory.reflections())


def format_kinds(store: Path) -> str:
    """The learned store's lessons, counted by kind.

    >>> format_kinds(Path("runs/nowhere/store"))
    'the learned memory holds 0 lessons (none)'
    """
    kinds = lessons_by_kind(store)
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
    return f"the learned memory holds {sum(kinds.values())} lessons ({counts or 'none'})"
