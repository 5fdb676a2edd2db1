"""Calibration of the paired statistics (reflexion.report.paired): simulated comparisons with a
KNOWN effect, pushed through the package's own interval and McNemar test, to show that they see
a real effect and invent none.

Each simulated run is one comparison of strategy B against strategy A on n tasks, as `compare`
makes. Every task has a latent difficulty: its chance of success under A, q, is drawn from a
Beta with mean `base` (concentration --concentration; 1.0 gives arms whose outcomes correlate
at 0.5, and about 75% of tasks tied at base 0.5, as the real comparisons are mostly ties);
under B it is min(q + effect, 1). A and B then pass or fail each task independently. The true
difference is the model's expected one, E[min(q + effect, 1)] - E[q], worked out exactly from
the Beta (`true_difference`); clipping at 1 makes it smaller than the nominal effect.

Four tables:

1. Coverage: the share of runs whose 95% interval of B - A (the one `pair()` reports) holds the
   true difference. A calibrated interval holds it in about 95% of runs; a clearly lower share
   means the interval is too narrow and its "held" verdicts overclaim.
2. False positives: with no effect (B's chances are A's), the share of runs where McNemar's p
   is below 0.05. It should be at most about 5%; the exact test is conservative, so below 5%
   at small n is expected, not a defect.
3. Power: with an effect, the share of runs that find it, in the right direction: McNemar's
   p < 0.05 and B ahead. The column headed +0 is the false-positive rate again (at no effect
   there is no wrong direction). Read across a row to see how large an effect n tasks can see.
4. The same for the interval lying wholly above 0 (the "held" of `direction()`); its +0
   column is the interval's own false-positive rate, about 5% if it is calibrated.

The numbers are the package's own: `mcnemar_p` for the p-value, and for the interval
`bootstrap_rows` over the per-task differences with `RESAMPLES` and the fixed seed, which is
what `pair()` runs through `bootstrap_mean`; the runs of a cell go through it as the columns of
one matrix (its draws of tasks depend only on the number of tasks, so each column's interval
is the one `pair()` reports for that run alone, and `main` checks this on a few runs with
`pair()` itself before it prints). Building TaskResult records for every run would take about
40 ms a run.

    .venv/bin/python scripts/calibrate.py                  # 5,000 runs a cell, under a minute
    .venv/bin/python scripts/calibrate.py --quick          # 200 runs a cell, a few seconds
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from collections.abc import Sequence
from enum import StrEnum

import numpy as np
import numpy.typing as npt
from scipy.stats import beta

from reflexion import TaskResult
from reflexion.report import RESAMPLES, align, bootstrap_rows, mcnemar_p, pair

Outcomes = npt.NDArray[np.bool_]  # runs x tasks, True: passed
Matrix = npt.NDArray[np.float64]

CONCENTRATION = 1.0  # the Beta's a + b: the lower, the more a task's outcome is settled by it
ALPHA = 0.05
BASE = 0.5  # A's success rate in the false-positive and power tables
COVERAGE_BASES = (0.3, 0.5, 0.7)
COVERAGE_EFFECTS = (0.0, 0.10)
COVERAGE_TASKS = (50, 164)
TASKS = (20, 50, 100, 164)
POWER_EFFECTS = (0.0, 0.05, 0.10, 0.20, 0.30)
CHUNK = 1000  # runs per bootstrap matrix: bounds memory at resamples x CHUNK floats


class Criterion(StrEnum):
    """What counts as finding a difference."""

    MCNEMAR = "McNemar p < 0.05"
    INTERVAL = "95% interval excludes 0"


def simulate(
    n: int, base: float, effect: float, runs: int, seed: int, concentration: float = CONCENTRATION
) -> tuple[Outcomes, Outcomes]:
    """A's and B's outcomes (runs x n tasks), the same for the same arguments.

    >>> a, b = simulate(n=10, base=0.5, effect=0.1, runs=3, seed=0)
    >>> a.shape, b.dtype
    ((3, 10), dtype('bool'))
    """
    # subtle: each cell seeds its own stream, so a cell's numbers do not depend on which other
    # cells ran before it, and power at +0 is the false-positive rate's very simulation
    rng = np.random.default_rng([seed, n, round(base * 1000), round(effect * 1000)])
    q = rng.beta(concentration * base, concentration * (1 - base), size=(runs, n))
    a = rng.random((runs, n)) < q
    b = rng.random((runs, n)) < np.minimum(q + effect, 1.0)
    return a, b


def true_difference(base: float, effect: float, concentration: float = CONCENTRATION) -> float:
    """E[min(q + effect, 1)] - E[q] for q ~ Beta with mean `base`: the difference a calibrated
    interval should hold. effect - E[(q - c)+] with c = 1 - effect, in closed form.

    >>> round(true_difference(0.5, 0.1), 4), true_difference(0.5, 0.0)
    (0.0864, 0.0)
    """
    if not 0 <= effect < 1:
        msg = f"effect must be in [0, 1), got {effect}"
        raise ValueError(msg)
    a, b = concentration * base, concentration * (1 - base)
    c = 1 - effect
    # E[q; q > c] = base * P(q' > c) for q' ~ Beta(a + 1, b)
    excess = base * beta.sf(c, a + 1, b) - c * beta.sf(c, a, b)
    return float(effect - excess)


def intervals(a: Outcomes, b: Outcomes) -> tuple[Matrix, Matrix]:
    """Each run's 95% bootstrap interval of B - A, as `pair()` computes it: low, high (runs)."""
    diffs = (b.astype(np.float64) - a).T  # tasks x runs: one column per run
    parts = [bootstrap_rows(diffs[:, i : i + CHUNK], RESAMPLES) for i in range(0, len(a), CHUNK)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


@functools.cache
def _mcnemar(won: int, lost: int) -> float:
    return mcnemar_p(won, lost)  # the package's test; runs repeat the same counts


def p_values(a: Outcomes, b: Outcomes) -> Matrix:
    """Each run's exact McNemar p-value (runs)."""
    won = (b & ~a).sum(axis=1)
    lost = (a & ~b).sum(axis=1)
    return np.array([_mcnemar(int(w), int(v)) for w, v in zip(won, lost, strict=True)])


def task_results(a: Outcomes, b: Outcomes) -> list[TaskResult]:
    """One run (a row of each) as the records a run folder holds, for `pair(results, "A", "B")`."""

    def record(strategy: str, task: int, passed: bool) -> TaskResult:
        return TaskResult("sim", "sim", f"t{task:04d}", strategy, 0, "", 0.0, 1, passed, passed,
                          1, 0, 0, 0, 0.0)  # fmt: skip

    return [
        record(name, t, bool(passed))
        for name, row in (("A", a), ("B", b))
        for t, passed in enumerate(row)
    ]


def coverage(
    n: int, base: float, effect: float, runs: int, seed: int, concentration: float = CONCENTRATION
) -> float:
    """The share of runs whose 95% interval holds the true difference.

    >>> 0.9 < coverage(n=100, base=0.5, effect=0.1, runs=200, seed=1) < 1
    True
    """
    a, b = simulate(n, base, effect, runs, seed, concentration)
    low, high = intervals(a, b)
    truth = true_difference(base, effect, concentration)
    return float(np.mean((low <= truth) & (truth <= high)))


def false_positive_rate(
    n: int, runs: int, seed: int, base: float = BASE, concentration: float = CONCENTRATION
) -> float:
    """The share of runs with McNemar's p < 0.05 when B's chances are A's.

    >>> false_positive_rate(n=100, runs=200, seed=1) <= 0.06
    True
    """
    a, b = simulate(n, base, 0.0, runs, seed, concentration)
    return float(np.mean(p_values(a, b) < ALPHA))


def power(
    n: int,
    effect: float,
    runs: int,
    seed: int,
    criterion: Criterion = Criterion.MCNEMAR,
    base: float = BASE,
    concentration: float = CONCENTRATION,
    alpha: float = ALPHA,
) -> float:
    """The share of runs where `criterion` finds a difference and B comes out ahead (at effect 0,
    either way: there is no wrong direction, so this is the false-positive rate).

    >>> power(n=100, effect=0.3, runs=200, seed=1) > 0.9
    True
    """
    a, b = simulate(n, base, effect, runs, seed, concentration)
    if criterion is Criterion.MCNEMAR:
        ahead = (b.sum(axis=1) - a.sum(axis=1)).astype(np.float64)
        found = p_values(a, b) < alpha
    else:
        low, high = intervals(a, b)
        ahead = np.where(low > 0, 1.0, np.where(high < 0, -1.0, 0.0))
        found = ahead != 0
    right = ahead > 0 if effect > 0 else np.ones(len(a), dtype=bool)
    return float(np.mean(found & right))


def check_against_pair(runs: int = 5, seed: int = 0) -> None:
    """Raise unless the batched intervals and p-values are `pair()`'s, run by run."""
    a, b = simulate(50, 0.5, 0.1, runs, seed)
    low, high = intervals(a, b)
    p = p_values(a, b)
    for i in range(runs):
        got = pair(task_results(a[i], b[i]), "A", "B")
        mine = (low[i], high[i], p[i])
        if (got.difference_low, got.difference_high, got.p_value) != mine:
            msg = f"run {i}: pair() gives {got}, the batched path {mine}"
            raise AssertionError(msg)


def pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def coverage_table(runs: int, seed: int, concentration: float) -> str:
    rows, held = [], []
    for n in COVERAGE_TASKS:
        for base in COVERAGE_BASES:
            for effect in COVERAGE_EFFECTS:
                share = coverage(n, base, effect, runs, seed, concentration)
                held.append(share)
                truth = true_difference(base, effect, concentration)
                rows.append((str(n), f"{base:.1f}", f"+{effect * 100:.0f}",
                             f"{truth * 100:+.2f}", pct(share)))  # fmt: skip
    rows.append(("all", "", "", "", pct(float(np.mean(held)))))
    header = ("tasks", "base p_A", "effect (pts)", "true B - A (pts)", "interval holds it")
    return align(header, rows, left=0)


def rate_table(runs: int, seed: int, concentration: float, criterion: Criterion) -> str:
    header = ("tasks", *(f"+{e * 100:.0f} pts" for e in POWER_EFFECTS))

    def row(n: int) -> tuple[str, ...]:
        shares = (power(n, e, runs, seed, criterion, BASE, concentration) for e in POWER_EFFECTS)
        return (str(n), *map(pct, shares))

    rows = [row(n) for n in TASKS]
    truths = ", ".join(
        f"+{e * 100:.0f} -> {true_difference(BASE, e, concentration) * 100:+.1f}"
        for e in POWER_EFFECTS
    )
    return f"{align(header, rows, left=0)}\n(true B - A in points: {truths})"


def fpr_table(runs: int, seed: int, concentration: float) -> str:
    rows = [(str(n), pct(false_positive_rate(n, runs, seed, BASE, concentration))) for n in TASKS]
    return align(("tasks", "McNemar p < 0.05 with no effect"), rows, left=0)


PLAN_EFFECTS = (0.0, 0.05, 0.10, 0.15, 0.20)


def plan_table(n: int, base: float, alpha: float, runs: int, seed: int, conc: float) -> str:
    """The power of one planned comparison: n tasks, A's rate `base`, McNemar p < `alpha`."""
    shares = [power(n, e, runs, seed, Criterion.MCNEMAR, base, conc, alpha) for e in PLAN_EFFECTS]
    truths = [true_difference(base, e, conc) * 100 for e in PLAN_EFFECTS]
    header = ("effect (pts)", "true B - A (pts)", f"found: p < {alpha:g}, B ahead")
    rows = [
        (f"+{e * 100:.0f}", f"{t:+.1f}", pct(s))
        for e, t, s in zip(PLAN_EFFECTS, truths, shares, strict=True)
    ]
    return align(header, rows, left=0)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5000, help="simulated runs per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concentration", type=float, default=CONCENTRATION)
    parser.add_argument("--quick", action="store_true", help="200 runs per cell")
    parser.add_argument("--plan", type=int, help="only the power of a comparison on N tasks")
    parser.add_argument("--base", type=float, default=0.19, help="with --plan: A's pass rate")
    parser.add_argument("--alpha", type=float, default=0.01, help="with --plan: McNemar's level")
    args = parser.parse_args(argv)
    runs = 200 if args.quick else args.runs
    if runs < 1 or not 0 < args.concentration < math.inf:
        parser.error("--runs and --concentration must be positive (and finite)")
    if args.seed < 0:
        parser.error(f"--seed must be 0 or more, got {args.seed}")
    check_against_pair()
    if args.plan is not None:
        if args.plan < 2 or not 0 < args.base < 1 or not 0 < args.alpha < 1:
            parser.error("--plan needs at least 2 tasks, and --base and --alpha in (0, 1)")
        print(f"command: .venv/bin/python scripts/calibrate.py {' '.join(sys.argv[1:])}")
        print(f"{args.plan} tasks, base p_A {args.base:g}, {runs:,} runs per cell\n")
        print(plan_table(args.plan, args.base, args.alpha, runs, args.seed, args.concentration))
        return
    start = time.perf_counter()
    print(f"Simulated paired comparisons: {runs:,} runs per cell, seed {args.seed}, per-task "
          f"chance q ~ Beta(mean base, concentration {args.concentration:g}), B's min(q + effect, "
          f"1); {RESAMPLES:,} bootstrap resamples as pair() draws them.")  # fmt: skip
    shown = sys.argv[1:] if argv is None else list(argv)
    print(" ".join(["command: .venv/bin/python scripts/calibrate.py", *shown]))
    conc = args.concentration
    print("\n1. Coverage of the 95% interval of B - A (should be about 95%)\n")
    print(coverage_table(runs, args.seed, conc))
    print(f"\n2. McNemar false positives, base p_A {BASE}, no effect (should be at most 5%)\n")
    print(fpr_table(runs, args.seed, conc))
    for number, criterion in ((3, Criterion.MCNEMAR), (4, Criterion.INTERVAL)):
        print(f"\n{number}. Power, base p_A {BASE}: {criterion} and B ahead\n")
        print(rate_table(runs, args.seed, conc, criterion))
    print(f"\nwall time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
