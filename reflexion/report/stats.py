"""The numbers behind a report: success rates with bootstrap intervals over tasks, cost per solved
task, and success curves by episode and by cost. Pure numpy; nothing here plots.

Intervals resample TASKS with replacement (a task's seeds are averaged first), so they answer
"how much would this number move on another draw of tasks like these":

    >>> rate = bootstrap_mean([1.0, 0.0, 1.0, 1.0])
    >>> rate.value, rate.low <= rate.value <= rate.high
    (0.75, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from reflexion.core.records import Point, Record, TaskResult

RESAMPLES = 2000
SEED = 0  # fixed: the same results always give the same intervals
LEVEL = 0.95
Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Rate(Record):
    """A mean over tasks with its bootstrap interval."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Curve(Record):
    """Success as a function of `x` (episodes, tokens or LLM calls), with a bootstrap band."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]


def task_matrix(
    results: Sequence[TaskResult], value: Callable[[TaskResult], list[float]]
) -> Matrix:
    """Rows are tasks (sorted by id), each the mean of `value` over the task's seeds.

    >>> task_matrix(results, lambda r: [float(r.final_passed)])        # doctest: +SKIP
    array([[1. ], [0.5]])
    """
    rows: dict[str, list[list[float]]] = {}
    for r in results:
        rows.setdefault(r.task_id, []).append(value(r))
    # subtle: rows in task-id order, not in the order trials finished (which varies between
    # runs): the bootstrap draws rows by position, so the intervals must not depend on it
    return np.array([np.mean(rows[t], axis=0) for t in sorted(rows)], dtype=np.float64)


def resampled_means(matrix: Matrix, resamples: int = RESAMPLES, seed: int = SEED) -> Matrix:
    """Each column's mean over `resamples` draws of the rows (tasks) with replacement, the rows
    of a draw shared by every column (so paired columns stay paired): resamples x columns.

    >>> resampled_means(np.array([[1.0, 2.0]]), resamples=3).tolist()
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    """
    n = matrix.shape[0]
    rng = np.random.default_rng(seed)
    # subtle: a draw of n tasks with replacement is a row of multinomial counts, so all the
    # resampled means are one matrix product instead of resamples x n x columns gathers.
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)
    means: Matrix = counts @ matrix / n
    return means


def bootstrap_rows(
    matrix: Matrix, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> tuple[Matrix, Matrix]:
    """Percentile interval of each column's mean over rows (tasks), resampling rows jointly.

    >>> low, high = bootstrap_rows(np.array([[0.0, 1.0], [1.0, 1.0]]))
    >>> high.tolist()
    [1.0, 1.0]
    """
    means = resampled_means(matrix, resamples, seed)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail], axis=0)
    return low, high


def bootstrap_mean(
    values: Sequence[float] | Matrix, resamples: int = RESAMPLES, seed: int = SEED
) -> Rate:
    """The mean of per-task values and its bootstrap 95% interval.

    >>> bootstrap_mean([1.0, 1.0]).to_dict()
    {'value': 1.0, 'low': 1.0, 'high': 1.0}
    """
    column = np.asarray(values, dtype=np.float64).reshape(-1, 1)
    if column.size == 0:
        return Rate(0.0, 0.0, 0.0)
    low, high = bootstrap_rows(column, resamples, seed)
    return Rate(float(column.mean()), float(low[0]), float(high[0]))


def success_rate(
    results: Sequence[TaskResult], passed: Callable[[TaskResult], bool], resamples: int = RESAMPLES
) -> Rate:
    """The pass rate over tasks (seeds averaged first) with its interval over tasks.

    >>> success_rate(results, lambda r: r.final_passed)        # doctest: +SKIP
    Rate(value=0.625, low=0.25, high=0.875)
    """
    matrix = task_matrix(results, lambda r: [float(passed(r))])
    return bootstrap_mean(matrix[:, 0] if matrix.size else [], resamples)


def per_solved(results: Sequence[TaskResult], cost: Callable[[TaskResult], int]) -> float | None:
    """Total cost over all trials divided by the trials whose returned candidate passed held-out;
    None when none passed (the cost of a solve is unknown, not infinite).

    >>> per_solved(results, lambda r: r.llm_calls)        # doctest: +SKIP
    7.5
    """
    solved = sum(r.final_passed for r in results)
    return sum(cost(r) for r in results) / solved if solved else None


def passed_at(
    curve: Sequence[Point], key: Callable[[Point], float], limit: float, default: bool
) -> bool:
    """Whether the best-so-far passes at the last point with key(point) <= limit; a trial that
    stopped early keeps its last state, and one with no such point has not passed.

    >>> curve = [Point(1, -1, -1, False, False, 0, 1), Point(2, 0, 0, True, True, 0, 3)]
    >>> passed_at(curve, lambda p: p.calls, 2, default=False)
    False
    """
    if not curve:
        return default  # an old record without a curve: only the final verdict is known
    state = False
    for point in curve:
        if key(point) > limit:
            break
        state = point.best_passed
    return state


def episode_curve(
    results: Sequence[TaskResult], episodes: int, resamples: int = RESAMPLES
) -> Curve:
    """Fraction of trials whose best-so-far passes held-out after e = 1..episodes episodes.

    >>> episode_curve(results, 3).y        # doctest: +SKIP
    (0.0, 0.5, 0.75)
    """
    xs = list(range(1, episodes + 1))

    def row(r: TaskResult) -> list[float]:
        return [float(passed_at(r.curve, _episode, e, r.final_passed)) for e in xs]

    return _curve(results, [float(x) for x in xs], row, resamples)


def _episode(point: Point) -> float:
    return point.episode


def cost_of(point: Point, unit: str) -> int:
    """The cumulative cost of a point in `unit` ("tokens" or "LLM calls").

    >>> cost_of(Point(2, 0.0, 0.0, True, True, tokens=900, calls=3), "LLM calls")
    3
    """
    return point.tokens if unit == "tokens" else point.calls


def cost_unit(results: Sequence[TaskResult]) -> str | None:
    """ "tokens" when any were counted, else "LLM calls" when any were made, else None (a
    scripted actor: there is no cost axis to plot).

    >>> cost_unit([])
    """
    if any(r.input_tokens + r.output_tokens for r in results):
        return "tokens"
    if any(r.llm_calls for r in results):
        return "LLM calls"
    return None


def cost_curve(
    results: Sequence[TaskResult], unit: str, budget: float, resamples: int = RESAMPLES
) -> Curve:
    """Fraction of trials whose best-so-far passes held-out within a cost budget, as a step
    function: one x per distinct cumulative cost (from 0), then `budget`, the right edge.

    >>> cost_curve(results, "tokens", budget=5000).x[:3]        # doctest: +SKIP
    (0.0, 812.0, 1650.0)
    """

    def cost(point: Point) -> float:
        return cost_of(point, unit)

    costs = {0, *(cost_of(p, unit) for r in results for p in r.curve)}
    xs = [float(c) for c in sorted(costs) if c <= budget]
    if xs[-1] < budget:
        xs.append(float(budget))

    def row(r: TaskResult) -> list[float]:
        return [float(passed_at(r.curve, cost, x, r.final_passed)) for x in xs]

    return _curve(results, xs, row, resamples)


def _curve(
    results: Sequence[TaskResult],
    xs: list[float],
    row: Callable[[TaskResult], list[float]],
    resamples: int,
) -> Curve:
    if not results:
        return Curve((), (), (), ())
    matrix = task_matrix(results, row)
    low, high = bootstrap_rows(matrix, resamples)
    y = matrix.mean(axis=0)
    return Curve(tuple(xs), *(tuple(float(v) for v in a) for a in (y, low, high)))
