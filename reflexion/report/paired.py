"""Two sets of results on the same tasks, compared task by task (paired): how many tasks each
side won, the difference in pass rate, and an exact McNemar test (a two-sided binomial test on
the tasks where the two disagree; the tasks both passed or both failed say nothing about which
side is better).

    >>> c = compare_paired({"a": True, "b": True, "c": False}, {"a": True, "b": False, "c": False})
    >>> (c.won, c.lost, c.tied, c.difference)
    (1, 0, 2, -0.3333333333333333)
    >>> round(c.p_value, 3)
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reflexion.core.records import Record


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
    from scipy.stats import binomtest

    discordant = won + lost
    return 1.0 if discordant == 0 else float(binomtest(won, discordant, 0.5).pvalue)


def compare_paired(a: Mapping[str, bool], b: Mapping[str, bool]) -> Paired:
    """Pass/fail by task key for two sides; only keys both have are compared."""
    keys = sorted(set(a) & set(b))
    won = sum(b[k] and not a[k] for k in keys)
    lost = sum(a[k] and not b[k] for k in keys)
    n = len(keys)
    rate_a = sum(a[k] for k in keys) / n if n else 0.0
    rate_b = sum(b[k] for k in keys) / n if n else 0.0
    return Paired(n, rate_a, rate_b, won, lost, n - won - lost, mcnemar_p(won, lost))
