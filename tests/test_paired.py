"""Paired comparison of two result sets: counts by hand, the McNemar p-value against scipy."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from reflexion.report.paired import compare_paired, mcnemar_p


def test_counts_are_per_task_and_only_shared_tasks_count() -> None:
    a = {"t1": True, "t2": False, "t3": False, "t4": True, "only-a": True}
    b = {"t1": True, "t2": True, "t3": True, "t4": False, "only-b": False}
    c = compare_paired(a, b)
    assert (c.tasks, c.won, c.lost, c.tied) == (4, 2, 1, 1)
    assert (c.rate_a, c.rate_b, c.difference) == (0.5, 0.75, 0.25)


@pytest.mark.parametrize(("won", "lost"), [(0, 0), (1, 0), (5, 1), (3, 3), (0, 9), (12, 4)])
def test_mcnemar_is_the_exact_binomial_on_disagreements(won: int, lost: int) -> None:
    expected = 1.0 if won + lost == 0 else binomtest(won, won + lost, 0.5).pvalue
    assert mcnemar_p(won, lost) == pytest.approx(expected)
    assert mcnemar_p(won, lost) == pytest.approx(mcnemar_p(lost, won))  # two-sided


def test_a_hand_computed_value() -> None:
    # 8 disagreements, all one way: 2 * 0.5**8
    assert mcnemar_p(8, 0) == pytest.approx(2 / 256)
