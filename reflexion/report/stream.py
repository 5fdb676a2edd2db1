"""Success by position in a stream of tasks (--order stream): after the first n tasks of the
stream, each strategy's running held-out success, and its running wins and losses against
`single` on the same tasks (a task's seeds averaged first, as in the paired table).

>>> curves = stream_curves(results, ["q2", "q0", "q1"], ["single", "reflexion"])  # doctest: +SKIP
>>> stream_rows(curves, 3)[-1]                                                    # doctest: +SKIP
('3', '33.3%', '66.7% (+1/-0)')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reflexion.core.records import Record, TaskResult
from reflexion.report.paired import task_means
from reflexion.report.summary import align

AGAINST = "single"  # the strategy every other one is paired with, position by position


@dataclass(frozen=True)
class StreamCurve(Record):
    """One strategy along the stream: at `positions` (1-based, the tasks it finished, in stream
    order) its running final success, and its running tasks won and lost against `against`
    (empty when the run has no such strategy, or this is it)."""

    strategy: str
    positions: tuple[int, ...]
    rates: tuple[float, ...]
    against: str | None = None
    won: tuple[int, ...] = ()
    lost: tuple[int, ...] = ()


def stream_tasks(config: dict[str, Any], results: Sequence[TaskResult]) -> list[str]:
    """The stream's task order: as config.json recorded it, or (a folder written before the
    order was recorded) as the results first reached each task.

    >>> stream_tasks({"stream_order": ["q1", "q0"]}, [])
    ['q1', 'q0']
    """
    recorded = config.get("stream_order")
    if isinstance(recorded, list):
        return [str(t) for t in recorded]
    return list(dict.fromkeys(r.task_id for r in results))


def stream_curves(
    results: Sequence[TaskResult], order: Sequence[str], strategies: Sequence[str]
) -> list[StreamCurve]:
    """Each strategy's curve along `order`, in `strategies` order (those with results)."""
    means = {s: task_means(r for r in results if r.strategy == s) for s in strategies}
    base = means.get(AGAINST) or None
    curves = []
    for s, mine in means.items():
        if not mine:
            continue
        done = [(i, t) for i, t in enumerate(order, 1) if t in mine]
        rates = _running([mine[t][0] for _, t in done])
        curve = StreamCurve(s, tuple(i for i, _ in done), rates)
        if base is not None and s != AGAINST:
            won, lost = _running_wins(mine, base, [t for _, t in done])
            curve = StreamCurve(s, curve.positions, rates, AGAINST, won, lost)
        curves.append(curve)
    return curves


def _running(values: Sequence[float]) -> tuple[float, ...]:
    total, out = 0.0, []
    for n, v in enumerate(values, 1):
        total += v
        out.append(total / n)
    return tuple(out)


def _running_wins(
    mine: dict[str, tuple[float, float]], base: dict[str, tuple[float, float]], tasks: list[str]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    won, lost, wins, losses = 0, 0, [], []
    for t in tasks:
        if t in base:  # a task the other side has not finished yet is no pair
            won += mine[t][0] > base[t][0]
            lost += mine[t][0] < base[t][0]
        wins.append(won)
        losses.append(lost)
    return tuple(wins), tuple(losses)


def checkpoints(n: int) -> list[int]:
    """About ten positions to tabulate, at a round step, and always the last.

    >>> checkpoints(8), checkpoints(50), checkpoints(164)[-3:]
    ([1, 2, 3, 4, 5, 6, 7, 8], [5, 10, 15, 20, 25, 30, 35, 40, 45, 50], [140, 160, 164])
    """
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 10**9) if n <= 10 * s)
    return sorted({*range(step, n + 1, step), n}) if n else []


def stream_header(curves: Sequence[StreamCurve]) -> tuple[str, ...]:
    return ("after tasks", *(c.strategy for c in curves))


def stream_rows(curves: Sequence[StreamCurve], tasks: int) -> list[tuple[str, ...]]:
    """The table's cells: one row per checkpoint of a stream of `tasks` tasks (none without
    curves: a run that was no stream)."""
    rows = []
    for at in checkpoints(tasks) if curves else []:
        rows.append((str(at), *(_cell(c, at) for c in curves)))
    return rows


def _cell(c: StreamCurve, at: int) -> str:
    seen = [i for i, p in enumerate(c.positions) if p <= at]
    if not seen:
        return ""
    i = seen[-1]
    rate = f"{c.rates[i] * 100:.1f}%"
    return f"{rate} (+{c.won[i]}/-{c.lost[i]})" if c.won else rate


def stream_note(config: dict[str, Any], order: Sequence[str]) -> str:
    """Which order the tasks ran in, for the reader.

    >>> stream_note({"stream_seed": 3}, ["q2", "q0", "q1"])
    'The tasks ran shuffled by seed 3: q2, q0, q1.'
    """
    seed = config.get("stream_seed")
    how = "in the env's order" if seed is None else f"shuffled by seed {seed}"
    shown = ", ".join(order[:12]) + (", ..." if len(order) > 12 else "")
    return f"The tasks ran {how}: {shown}."


STREAM_TEXT = (
    "Each cell is a strategy's held-out final success over the first n tasks of the stream "
    "(the order its tasks ran in; a task's seeds averaged first). (+W/-L): the tasks among "
    "those n where it did better (W) or worse (L) than single on the same task. A strategy that "
    "learns from the tasks before should pull ahead as n grows."
)


def by_block(
    results: Sequence[TaskResult], labels: Sequence[str], order: Sequence[str], blocks: int
) -> str:
    """Each arm's final successes in each of `blocks` equal blocks of the stream `order` (of the
    tasks `results` hold): does an arm pull ahead later in the stream?

    >>> r = TaskResult("r", "e", "t2", "a", 0, "x", 1.0, 1, True, True, 1, 1, 10, 5, 1.0)
    >>> print(by_block([r], ["a"], ["t1", "t2"], 2))
    arm, questions in stream order  1-1
    a                               1/1
    """
    done = {r.task_id for r in results}
    ordered = [t for t in order if t in done]
    size = max(1, -(-len(ordered) // blocks))
    spans = [ordered[i : i + size] for i in range(0, len(ordered), size)]
    header = [f"{i * size + 1}-{i * size + len(span)}" for i, span in enumerate(spans)]
    cells = []
    for label in labels:
        passed = {r.task_id for r in results if r.strategy == label and r.final_passed}
        cells.append([label, *(f"{len(passed & set(span))}/{len(span)}" for span in spans)])
    return align(("arm, questions in stream order", *header), cells)


def final_score(result: TaskResult) -> float:
    """The visible score of the trial's last attempt (e.g. concept coverage)."""
    return result.curve[-1].score if result.curve else 0.0


def by_quarter(
    order: Sequence[str],
    arms: Mapping[str, Sequence[TaskResult]],
    what: str,
    value: Callable[[TaskResult], float],
) -> str:
    """Each arm's mean `value` in each quarter of the stream `order`: does it rise with the
    lessons behind it? (A task an arm has not finished counts 0.)

    >>> r = TaskResult("r", "e", "t3", "a", 0, "x", 1.0, 1, True, True, 1, 1, 10, 5, 1.0)
    >>> print(by_quarter(["t0", "t1", "t2", "t3"], {"a": [r]}, "final success",
    ...                  lambda r: float(r.final_passed)))
    final success by position in the stream (quarters of the test tasks)
    memory            Q1 (1)  Q2 (1)  Q3 (1)  Q4 (1)
    a                    0.00     0.00     0.00     1.00
    """
    quarters = [order[i * len(order) // 4 : (i + 1) * len(order) // 4] for i in range(4)]
    lines = [f"{what} by position in the stream (quarters of the test tasks)"]
    lines.append(
        "memory          " + "".join(f"  Q{i + 1} ({len(q)})" for i, q in enumerate(quarters))
    )
    for name, results in arms.items():
        values = {r.task_id: value(r) for r in results}
        cells = [sum(values.get(t, 0.0) for t in q) / max(len(q), 1) for q in quarters]
        lines.append(f"{name:<16}" + "".join(f"{c:9.2f}" for c in cells))
    return "\n".join(lines)
