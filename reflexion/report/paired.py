"""Two sets of results on the same tasks, compared task by task (paired): how many tasks each
side won, the difference in pass rate, and an exact McNemar test (a two-sided binomial test on
the tasks where the two disagree; the tasks both passed or both failed say nothing about which
side is better).

    >>> c = compare_paired({"a": True, "b": True, "c": False}, {"a": True, "b": False, "c": False})
    >>> (c.won, c.lost, c.tied, c.difference)  # b against a: b lost task b
    (0, 1, 2, -0.3333333333333333)
    >>> round(c.p_value, 3)
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from reflexion.core.records import Record, TaskResult
from reflexion.report.stats import LEVEL, RESAMPLES, Matrix, bootstrap_mean, resampled_means


@dataclass(frozen=True)
class Paired(Record):
    """B against A on the tasks both have: `won` (A failed, B passed), `lost`, `tied`."""

    tasks: int
    rate_a: float
    rate_b: float
    won: int
    lost: int
    tied: int
    p_value: float  # exact McNemar, two-sided

    @property
    def difference(self) -> float:
        return self.rate_b - self.rate_a


def mcnemar_p(won: int, lost: int) -> float:
    """Two-sided exact McNemar p-value: binomial(won + lost, 1/2) at least this lopsided.

    >>> mcnemar_p(0, 0), round(mcnemar_p(0, 6), 4)
    (1.0, 0.0312)
    """
    # binomial(n, 1/2) is symmetric, so the two-sided p is twice the smaller tail (at most 1),
    # as scipy's binomtest gives it; exact integers, and no scipy import on a page's first load
    n, least = won + lost, min(won, lost)
    if n == 0 or won == lost:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(least + 1))
    return min(1.0, float(Fraction(2 * tail, 2**n)))  # a Fraction: 2**n overflows a float


def compare_paired(a: Mapping[str, bool], b: Mapping[str, bool]) -> Paired:
    """Pass/fail by task key for two sides; only keys both have are compared."""
    keys = sorted(set(a) & set(b))
    won = sum(b[k] and not a[k] for k in keys)
    lost = sum(a[k] and not b[k] for k in keys)
    n = len(keys)
    rate_a = sum(a[k] for k in keys) / n if n else 0.0
    rate_b = sum(b[k] for k in keys) / n if n else 0.0
    return Paired(n, rate_a, rate_b, won, lost, n - won - lost, mcnemar_p(won, lost))


@dataclass(frozen=True)
class Pair(Record):
    """Strategy `b` against strategy `a` on the tasks both ran, a task's seeds averaged first:
    the difference in final success with a paired bootstrap interval over tasks, the tasks won,
    lost and tied, the exact McNemar p-value, b's tokens per task as a ratio of a's (with its
    interval), and about how many tasks would separate the two (None: no difference seen)."""

    a: str
    b: str
    tasks: int
    difference: float  # b's final success minus a's
    difference_low: float
    difference_high: float
    won: int  # tasks where b did better
    lost: int
    tied: int
    p_value: float
    token_ratio: float | None  # b's tokens / a's tokens, over the shared tasks; None: a spent none
    token_ratio_low: float | None
    token_ratio_high: float | None
    tasks_to_separate: int | None


def all_pairs(
    results: Sequence[TaskResult], order: Sequence[str] = (), resamples: int = RESAMPLES
) -> list[Pair]:
    """Every pair of strategies in `results`, each later one against each earlier one (in
    `order` first, then in order of appearance).

    >>> pairs = all_pairs(results, ["single", "self-refine", "reflexion"])  # doctest: +SKIP
    >>> [(p.a, p.b) for p in pairs]                                          # doctest: +SKIP
    [('single', 'self-refine'), ('single', 'reflexion'), ('self-refine', 'reflexion')]
    """
    names = list(dict.fromkeys([*order, *(r.strategy for r in results)]))
    names = [n for n in names if any(r.strategy == n for r in results)]
    return [pair(results, a, b, resamples) for i, a in enumerate(names) for b in names[i + 1 :]]


def pair(results: Sequence[TaskResult], a: str, b: str, resamples: int = RESAMPLES) -> Pair:
    """`b` against `a`, paired by task (see Pair)."""
    by_task = {
        s: task_means(r for r in results if r.strategy == s)  # task -> (success, tokens)
        for s in (a, b)
    }
    tasks = sorted(set(by_task[a]) & set(by_task[b]))
    # columns: success a, success b, tokens a, tokens b; rows in task order
    m = np.array([[*by_task[a][t], *by_task[b][t]] for t in tasks], dtype=np.float64)
    m = m[:, [0, 2, 1, 3]] if len(tasks) else np.zeros((0, 4))
    won = int(np.sum(m[:, 1] > m[:, 0]))
    lost = int(np.sum(m[:, 1] < m[:, 0]))
    diff = bootstrap_mean(m[:, 1] - m[:, 0], resamples)
    ratio = _token_ratio(m[:, 2:], resamples)
    return Pair(
        a=a,
        b=b,
        tasks=len(tasks),
        difference=diff.value,
        difference_low=diff.low,
        difference_high=diff.high,
        won=won,
        lost=lost,
        tied=len(tasks) - won - lost,
        p_value=mcnemar_p(won, lost),
        token_ratio=ratio[0],
        token_ratio_low=ratio[1],
        token_ratio_high=ratio[2],
        tasks_to_separate=tasks_to_separate(won, lost, len(tasks)),
    )


def paired_scores(
    a: Mapping[str, float], b: Mapping[str, float], names: tuple[str, str] = ("A", "B")
) -> str:
    """B's value against A's, paired by task (a visible score: finer than pass/fail where few
    pass): the means, the mean difference with its bootstrap interval, and the tasks where B was
    higher, lower and the same; "" when no task has both.

    >>> print(paired_scores({"t0": 0.5, "t1": 0.75}, {"t0": 0.75, "t1": 0.75}))
    A 0.625, B 0.750; B - A +0.125 [+0.000, +0.250], higher on 1, lower on 0, same on 1
    """
    tasks = sorted(a.keys() & b.keys())
    diffs = [b[t] - a[t] for t in tasks]
    if not diffs:
        return ""
    d = bootstrap_mean(diffs)
    up, down = sum(x > 1e-9 for x in diffs), sum(x < -1e-9 for x in diffs)
    means = [float(np.mean([side[t] for t in tasks])) for side in (a, b)]
    return (
        f"{names[0]} {means[0]:.3f}, {names[1]} {means[1]:.3f}; {names[1]} - {names[0]} "
        f"{d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}], higher on {up}, lower on {down}, "
        f"same on {len(diffs) - up - down}"
    )


def task_means(results: Iterable[TaskResult]) -> dict[str, tuple[float, float]]:
    """task -> (final success, tokens), each the mean over the task's seeds."""
    rows: dict[str, list[tuple[float, float]]] = {}
    for r in results:
        rows.setdefault(r.task_id, []).append(
            (float(r.final_passed), float(r.input_tokens + r.output_tokens))
        )
    return {
        t: (float(np.mean([s for s, _ in v])), float(np.mean([k for _, k in v])))
        for t, v in rows.items()
    }


def _token_ratio(tokens: Matrix, resamples: int) -> tuple[float | None, ...]:
    """sum(b) / sum(a) over tasks, with a percentile interval from resampling tasks jointly."""
    if tokens.size == 0 or tokens[:, 0].sum() == 0:
        return (None, None, None)
    means = resampled_means(tokens, resamples)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = means[:, 1] / means[:, 0]
    ratios = ratios[np.isfinite(ratios)]
    tail = (1.0 - LEVEL) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return (float(tokens[:, 1].sum() / tokens[:, 0].sum()), float(low), float(high))


def tasks_to_separate(won: int, lost: int, tasks: int, alpha: float = 0.05) -> int | None:
    """About how many tasks a McNemar test needs to tell the two apart at `alpha` (two-sided)
    with 80% power, if the share of tasks they disagree on and the net difference stay as
    observed (Connor's 1987 normal approximation). None when no net difference was observed.

    >>> tasks_to_separate(won=6, lost=2, tasks=40)
    155
    """
    if tasks == 0 or won == lost:
        return None
    disagree = (won + lost) / tasks
    delta = (won - lost) / tasks
    z_alpha, z_beta = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(POWER)
    n = (z_alpha * disagree**0.5 + z_beta * (disagree - delta**2) ** 0.5) ** 2 / delta**2
    return int(math.ceil(n))


POWER = 0.8


PAIRED_TEXT = (
    "Each row sets strategy B against strategy A on the same tasks (a task's seeds averaged "
    "first). B - A is the difference in final success, in percentage points, with a paired "
    "bootstrap 95% interval over tasks: an interval that holds 0 is no evidence either way. Won "
    "and lost count the tasks where B did better or worse; tied tasks say nothing about which is "
    "better. The McNemar p-value is the exact two-sided binomial test on the won and lost tasks. "
    "Tokens B/A is B's total tokens over A's on the same tasks, with its bootstrap interval. "
    "Tasks to separate is about how many tasks a McNemar test at 0.05 would need for 80% power, "
    "if the two disagreed as often, and one way as much, as here."
)

PAIR_COLUMNS: tuple[str, ...] = ("B vs A", "tasks", "B - A [95% CI]", "won", "lost", "tied")
PAIR_COLUMNS += ("McNemar p", "tokens B/A [95% CI]", "tasks to separate")


def pair_rows(pairs: Sequence[Pair]) -> list[tuple[str, ...]]:
    """The paired table's cells as text (differences in percentage points).

    >>> pair_rows([Pair("a", "b", 20, .05, -.05, .15, 1, 0, 19, 1.0, 2.0, 1.5, 2.5, 613)])[0][2]
    '+5.0 pts [-5.0, +15.0]'
    """

    def ratio(p: Pair) -> str:
        if p.token_ratio is None:
            return "no model"
        return f"{p.token_ratio:.2f}x [{p.token_ratio_low:.2f}-{p.token_ratio_high:.2f}]"

    return [
        (
            f"{p.b} vs {p.a}",
            str(p.tasks),
            f"{p.difference * 100:+.1f} pts "
            f"[{p.difference_low * 100:+.1f}, {p.difference_high * 100:+.1f}]",
            str(p.won),
            str(p.lost),
            str(p.tied),
            f"{p.p_value:.3f}",
            ratio(p),
            "no difference seen" if p.tasks_to_separate is None else f"~{p.tasks_to_separate:,}",
        )
        for p in pairs
    ]


def format_pairs(pairs: Sequence[Pair]) -> str:
    """The paired comparisons as aligned plain text, one row per pair of strategies."""
    from reflexion.report.summary import align

    return align(PAIR_COLUMNS, pair_rows(pairs))


def direction(p: Pair, expected: str) -> str:
    """Whether `p.b` against `p.a` went the `expected` way ("higher", "lower" or "same"), read
    from the difference and its paired 95% interval: "held" when the interval excludes 0 on that
    side (or, for "same", holds 0), "held in direction only" when just the point estimate does,
    else "did not hold".

    >>> direction(Pair("a", "b", 40, .1, .02, .2, 5, 1, 34, .2, 1.0, 1.0, 1.0, None), "higher")
    'held'
    """
    if expected == "same":  # an interval holding 0 shows no difference, not that there is none
        held = p.difference_low <= 0 <= p.difference_high
        return "held (no difference seen)" if held else "did not hold"
    sign = 1 if expected == "higher" else -1
    if sign * p.difference_low > 0 and sign * p.difference_high > 0:
        return "held"
    return "held in direction only" if sign * p.difference > 0 else "did not hold"
