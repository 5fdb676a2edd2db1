"""Two run folders on the same tasks, set side by side: each strategy of run A against the same
strategy of run B, paired by task with the comparison's statistics (reflexion.report.paired:
the difference in final success with its bootstrap interval, tasks won and lost, the exact
McNemar p-value, tokens B/A), the tasks that changed, and what the runtime did for each role
(model calls, output tokens, prompt tokens it processed, the share served from its cache).
Or arms taken from different run folders (RUN:STRATEGY), paired on the tasks they all finished:
a strategy run again after a fix, against a baseline that need not be run again (`diff_arms`).

    >>> d = diff_runs("runs/before", "runs/after")   # doctest: +SKIP
    >>> print(format_diff(d))                         # doctest: +SKIP
    A = runs/before
    B = runs/after
    ...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.records import Record, Step, TaskResult
from reflexion.core.runfolder import not_a_run
from reflexion.report.folders import (
    arm,
    differing_settings,
    first_attempt,
    run_config,
    run_results,
    run_steps,
)
from reflexion.report.memory import is_call
from reflexion.report.paired import Pair, format_pairs, pair, pair_rows
from reflexion.report.stream import by_block
from reflexion.report.summary import align, by_field, by_form, format_table, groups_of, summarize
from reflexion.runner.config import default_of

CHANGED_SHOWN = 8  # task ids listed per strategy and direction; the rest are counted


@dataclass(frozen=True)
class Work(Record):
    """What the runtime did for one strategy and role in one run: calls it answered (not the
    run's cache), output tokens, prompt tokens, and those of them served from its prefix cache."""

    strategy: str
    role: str
    calls: int = 0
    output_tokens: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0

    @property
    def processed(self) -> int:
        """Prompt tokens the runtime computed (not served from its cache)."""
        return self.prompt_tokens - self.cached_tokens


@dataclass(frozen=True)
class StrategyDiff(Record):
    """One strategy, run B against run A: the paired statistics, the tasks B won and lost, and
    each role's work in A and B."""

    strategy: str
    pair: Pair
    pass_a: float
    pass_b: float
    won: tuple[str, ...]
    lost: tuple[str, ...]
    work: tuple[tuple[Work, Work], ...]  # (A, B) per role


@dataclass(frozen=True)
class RunsDiff(Record):
    a: str
    b: str
    env: str
    strategies: tuple[StrategyDiff, ...]
    settings: tuple[str, ...]  # settings that change results on which the two runs differ
    only: tuple[str, ...] = ()  # strategies only one of the runs holds
    unreproducible: tuple[str, ...] = ()  # "A", "B": runs not made in reproducible decoding


def diff_runs(a: str | Path, b: str | Path) -> RunsDiff:
    """Run B against run A, strategy by strategy, on the tasks both ran. UsageError (one line)
    when either holds no finished trial, or when they ran different tasks (or finished different
    ones: a run still under way is diffed once it is done).

    >>> diff_runs("runs/before", "runs/after").strategies[0].pair.won  # doctest: +SKIP
    3
    """
    results = [run_results(a), run_results(b)]
    for folder, held in zip((a, b), results, strict=True):
        if not held:
            raise UsageError(not_a_run(Path(folder)))
    env = check_same_tasks(a, b, results[0], results[1])
    names = [list(dict.fromkeys(r.strategy for r in rs)) for rs in results]
    shared = [s for s in names[0] if s in names[1]]
    only = tuple(s for s in [*names[0], *names[1]] if s not in shared)
    for strategy in shared:  # a run still under way has finished some strategies only
        picked = [[r for r in rs if r.strategy == strategy] for rs in results]
        check_same_tasks(f"{a} ({strategy})", f"{b} ({strategy})", *picked)
    steps = [run_steps(a), run_steps(b)]
    return RunsDiff(
        str(a),
        str(b),
        env,
        tuple(strategy_diff(s, results, steps) for s in shared),
        tuple(differing_settings(a, b)),
        only,
        tuple(side for side, f in zip("AB", (a, b), strict=True) if unreproducible(run_config(f))),
    )


def unreproducible(config: dict[str, Any]) -> bool:
    """Whether a run's greedy answers may depend on the order and concurrency of its model calls:
    it was made with --no-reproducible, or before the setting existed.

    >>> unreproducible({"reproducible": True}), unreproducible({})
    (False, True)
    """
    return not config.get("reproducible", default_of("reproducible"))


def check_same_tasks(
    a: str | Path, b: str | Path, first: Sequence[TaskResult], second: Sequence[TaskResult]
) -> str:
    """The env both runs ran; UsageError when the envs or the task sets differ."""
    envs = sorted({r.env for r in first}), sorted({r.env for r in second})
    if envs[0] != envs[1]:
        msg = f"{a} ran {', '.join(envs[0])} and {b} ran {', '.join(envs[1])}: different tasks"
        raise UsageError(msg)
    tasks = {r.task_id for r in first}, {r.task_id for r in second}
    if tasks[0] != tasks[1]:
        apart = sorted(tasks[0] ^ tasks[1])
        verb = "is" if len(apart) == 1 else "are"
        msg = (
            f"{a} ran {len(tasks[0])} tasks and {b} ran {len(tasks[1])}; {len(apart)} {verb} not "
            f"in both (e.g. {apart[0]}): different tasks"
        )
        raise UsageError(msg)
    return ", ".join(envs[0])


def strategy_diff(
    strategy: str, results: Sequence[Sequence[TaskResult]], steps: Sequence[Sequence[Step]]
) -> StrategyDiff:
    """`strategy` of run B (as "B") against `strategy` of run A (as "A"), paired by task."""
    sides = [
        [dataclasses.replace(r, strategy=side) for r in rs if r.strategy == strategy]
        for side, rs in zip("AB", results, strict=True)
    ]
    both = [*sides[0], *sides[1]]
    p = pair(both, "A", "B")
    verdicts = [_task_success(s) for s in sides]
    tasks = sorted(set(verdicts[0]) & set(verdicts[1]))
    work_a, work_b = (work_by_role(s, strategy) for s in steps)
    roles = list(dict.fromkeys([*work_a, *work_b]))
    return StrategyDiff(
        strategy,
        p,
        sum(verdicts[0][t] for t in tasks) / len(tasks) if tasks else 0.0,
        sum(verdicts[1][t] for t in tasks) / len(tasks) if tasks else 0.0,
        tuple(t for t in tasks if verdicts[1][t] > verdicts[0][t]),
        tuple(t for t in tasks if verdicts[1][t] < verdicts[0][t]),
        tuple((work_a.get(r, Work(strategy, r)), work_b.get(r, Work(strategy, r))) for r in roles),
    )


def _task_success(results: Sequence[TaskResult]) -> dict[str, float]:
    """task -> final success, the mean over its seeds (as the paired comparison takes it)."""
    rows: dict[str, list[bool]] = {}
    for r in results:
        rows.setdefault(r.task_id, []).append(r.final_passed)
    return {t: sum(v) / len(v) for t, v in rows.items()}


def work_by_role(steps: Sequence[Step], strategy: str) -> dict[str, Work]:
    """role -> the runtime's work for `strategy`'s calls of that role; calls the run's own
    cache answered (data.reused) cost the runtime nothing and are left out.

    >>> s = Step("s1", "r", "x", "t", 0, 1, "generate", input_tokens=100, output_tokens=20,
    ...          data={"cached_tokens": 60})
    >>> work_by_role([s], "x")["generate"].processed
    40
    """
    sums: dict[str, list[int]] = {}
    for s in steps:
        if s.strategy == strategy and is_call(s) and not s.data.get("reused"):
            row = sums.setdefault(s.kind, [0, 0, 0, 0])
            row[0] += 1
            row[1] += s.output_tokens
            row[2] += s.input_tokens
            row[3] += int(s.data.get("cached_tokens", 0))
    return {role: Work(strategy, role, *row) for role, row in sums.items()}


DIFF_COLUMNS: tuple[str, ...] = ("strategy", "tasks", "pass A", "pass B", "B - A [95% CI]")
DIFF_COLUMNS += ("won", "lost", "tied", "McNemar p", "tokens B/A [95% CI]", "tasks to separate")
WORK_COLUMNS: tuple[str, ...] = ("strategy", "role", "calls A", "calls B", "output tok A")
WORK_COLUMNS += ("output tok B", "processed A", "processed B", "cached A", "cached B")


def diff_rows(diffs: Sequence[StrategyDiff]) -> list[tuple[str, ...]]:
    """The paired table's cells: the comparison's pair cells, each strategy's pass rates added."""
    rows = []
    for d, cells in zip(diffs, pair_rows([d.pair for d in diffs]), strict=True):
        rows.append((d.strategy, cells[1], f"{d.pass_a:.1%}", f"{d.pass_b:.1%}", *cells[2:]))
    return rows


def work_rows(works: Sequence[tuple[Work, Work]]) -> list[tuple[str, ...]]:
    """The work table's cells, one row per strategy and role: (A, B) of each.

    >>> w = Work("x", "generate", 2, 40, 200, 150), Work("x", "generate", 2, 40, 200, 0)
    >>> work_rows([w])[0][6:]
    ('50', '200', '75.0%', '0.0%')
    """

    def share(w: Work) -> str:
        return f"{w.cached_tokens / w.prompt_tokens:.1%}" if w.prompt_tokens else "n/a"

    return [
        (wa.strategy, wa.role, str(wa.calls), str(wb.calls), f"{wa.output_tokens:,}")
        + (f"{wb.output_tokens:,}", f"{wa.processed:,}", f"{wb.processed:,}", share(wa), share(wb))
        for wa, wb in works
    ]


def changed_line(d: StrategyDiff) -> str:
    """The tasks B won and lost, the first few of each by id."""

    def listed(tasks: Sequence[str]) -> str:
        shown = ", ".join(tasks[:CHANGED_SHOWN])
        more = len(tasks) - CHANGED_SHOWN
        return (shown + (f" and {more} more" if more > 0 else "")) or "none"

    return f"{d.strategy}: won {listed(d.won)}; lost {listed(d.lost)}"


def format_diff(d: RunsDiff) -> str:
    """The diff as plain text (see the module example)."""
    differ = ", ".join(d.settings) if d.settings else "none"
    parts = [f"A = {d.a}\nB = {d.b}\nenv {d.env}; settings that differ: {differ}"]
    if d.only:
        parts.append(f"in one run only (not compared): {', '.join(d.only)}")
    if d.unreproducible:
        runs = " and ".join(f"run {side}" for side in d.unreproducible)
        parts.append(
            f"{runs} not made in reproducible decoding (--no-reproducible, or a version before "
            "it): a greedy answer there depends on the order and concurrency of calls, so a few "
            "tasks won or lost can be decoding noise (docs/models.md gives the noise floor)"
        )
    if not d.strategies:
        parts.append("no strategy ran in both: nothing to pair")
        return "\n\n".join(parts)
    parts.append(
        "each strategy of B against the same strategy of A, paired by task:\n"
        + align(DIFF_COLUMNS, diff_rows(d.strategies))
    )
    parts.append("tasks B won and lost:\n" + "\n".join(map(changed_line, d.strategies)))
    if any(x.work for x in d.strategies):
        parts.append(
            "the runtime's work per role: model calls (the run's cache aside), output tokens, "
            "prompt tokens processed, and the share of prompt tokens served from its cache:\n"
            + align(WORK_COLUMNS, work_rows([w for x in d.strategies for w in x.work]), 2)
        )
    return "\n\n".join(parts)


@dataclass(frozen=True)
class Arm:
    """One arm of `diff_arms`: a strategy's trials in a run folder, under `label`; a strategy
    ending in @1 is its trials cut to their first answer (for `resample`, a single shot: its
    first answer is the greedy one), costed from the run's trace."""

    folder: Path
    strategy: str
    label: str


def parse_arm(text: str) -> Arm:
    """RUN:STRATEGY[@1][=LABEL] (the label defaults to the strategy, @1 included).

    >>> parse_arm("runs/a:exemplars=fixed").label, parse_arm("runs/a:resample@1").label
    ('fixed', 'resample@1')
    """
    folder, sep, rest = text.rpartition(":")
    strategy, _, label = rest.partition("=")
    name, at, cut = strategy.partition("@")
    if not sep or not folder or not name:
        msg = f"an arm is RUN:STRATEGY, RUN:STRATEGY@1 or either with =LABEL, got {text!r}"
    elif at and cut != "1":
        msg = f"only @1 (the first answer) can follow a strategy, got {text!r}"
    elif label.endswith("@1"):
        msg = f"@1 goes before =LABEL (RUN:STRATEGY@1=LABEL), got {text!r}"
    else:
        return Arm(Path(folder), strategy, label or strategy)
    raise UsageError(msg)


def load_arm(a: Arm) -> list[TaskResult]:
    """The arm's finished trials, each under the arm's label; UsageError when there are none."""
    if not a.folder.is_dir():
        msg = f"{a.folder}: no such run folder"
        raise UsageError(msg)
    name, at, _ = a.strategy.partition("@")
    results = first_attempt(a.folder, name, a.label) if at else arm(a.folder, name, a.label)
    if not results:
        where = " with its first answer in trace.jsonl" if at else ""
        msg = f"{a.folder}: no finished {name} trial{where}"
        raise UsageError(msg)
    return results


def diff_arms(
    arms: Sequence[Arm], by: str | None = None, blocks: int = 4, forms: int | None = None
) -> str:
    """The arms' table (`reflexion report`'s columns), each arm against the first paired by
    task, each arm's successes by the spec field `by` (a list field counts a task under each
    item) and by block of the first folder's stream order, and with `forms` how many final
    answers reasoned in more than `forms` words around their query or program. Only the tasks
    every arm finished count, so a run still under way is paired on what it has done.

    >>> print(diff_arms([parse_arm("runs/a:single"), parse_arm("runs/b:exemplars")]))
    ...                                                      # doctest: +SKIP
    12 tasks finished by every arm
    strategy   trials  final [95% CI] ...
    """
    labels = [a.label for a in arms]
    if len(set(labels)) < len(labels):
        msg = "two arms have the same name: add =LABEL to one"
        raise UsageError(msg)
    loaded = [load_arm(a) for a in arms]
    common = set.intersection(*({r.task_id for r in rs} for rs in loaded))
    if not common:
        msg = "the arms share no finished task"
        raise UsageError(msg)
    results = [r for rs in loaded for r in rs if r.task_id in common]
    first = run_config(arms[0].folder)
    parts = [
        f"{len(common)} tasks finished by every arm\n{format_table(summarize(results, labels))}"
    ]
    parts.append(format_pairs([pair(results, labels[0], label) for label in labels[1:]]))
    if by:
        from envs import make_env

        spec = {t.id: groups_of(t.spec.get(by)) for t in make_env(str(first["env"])).tasks()}
        parts.append(by_field(results, labels, spec))
    order = first.get("stream_order") or list(dict.fromkeys(r.task_id for r in loaded[0]))
    parts.append(by_block(results, labels, [str(t) for t in order], blocks))
    if forms is not None:
        parts.append(by_form(results, labels, forms))
    return "\n\n".join(parts)
