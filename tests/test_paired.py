"""Paired comparison of two result sets: counts by hand, the McNemar p-value against scipy."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest
from test_report_stats import trial

from reflexion.core.records import TaskResult
from reflexion.report.paired import (
    Pair,
    all_pairs,
    compare_paired,
    direction,
    mcnemar_p,
    pair,
    pair_rows,
    tasks_to_separate,
)


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


def results_of(
    strategy: str, passes: list[bool], tokens: list[int], seed: int = 0
) -> list[TaskResult]:
    return [
        trial(f"t{i}", [(p, k)], strategy=strategy, seed=seed)
        for i, (p, k) in enumerate(zip(passes, tokens, strict=True))
    ]


A_PASS = [True, False, False, True, False, False, True, False]
B_PASS = [True, True, True, False, True, False, True, True]  # won 4 (t1 t2 t4 t7), lost 1 (t3)


def test_a_pair_counts_tasks_and_tests_them_as_scipy_does() -> None:
    results = results_of("A", A_PASS, [100] * 8) + results_of("B", B_PASS, [300] * 8)
    p = pair(results, "A", "B", resamples=500)
    assert (p.tasks, p.won, p.lost, p.tied) == (8, 4, 1, 3)
    assert p.difference == pytest.approx(6 / 8 - 3 / 8)
    assert p.difference_low <= p.difference <= p.difference_high
    assert p.p_value == pytest.approx(binomtest(4, 5, 0.5).pvalue)
    assert p.token_ratio == pytest.approx(3.0)
    # every task costs B three times A, so every resample does too
    assert p.token_ratio_low == pytest.approx(3.0) and p.token_ratio_high == pytest.approx(3.0)


def test_the_paired_interval_is_narrower_than_the_unpaired_one() -> None:
    """Two strategies that agree on most tasks: pairing removes the tasks' own spread."""
    a = [i % 2 == 0 for i in range(40)]
    b = [x or i in (1, 3, 5) for i, x in enumerate(a)]  # b = a plus 3 more tasks
    p = pair(results_of("A", a, [1] * 40) + results_of("B", b, [1] * 40), "A", "B")
    assert (p.won, p.lost) == (3, 0)
    assert p.difference_low >= 0.0  # each resample's difference is 3 won tasks' share >= 0
    width_unpaired = 2 * 1.96 * (0.5 * 0.5 / 40) ** 0.5 * 2**0.5
    assert p.difference_high - p.difference_low < width_unpaired / 2


def test_seeds_are_averaged_per_task_before_pairing() -> None:
    # A passes t0 with one seed of two; B with both: B did better on t0
    results = results_of("A", [True], [10]) + results_of("A", [False], [10], seed=1)
    results += results_of("B", [True], [10]) + results_of("B", [True], [10], seed=1)
    p = pair(results, "A", "B")
    assert (p.tasks, p.won, p.lost) == (1, 1, 0) and p.difference == pytest.approx(0.5)


def test_all_pairs_follow_the_configured_order() -> None:
    results = results_of("x", [True], [1]) + results_of("y", [True], [1])
    results += results_of("z", [False], [1])
    pairs = all_pairs(results, ["z", "x", "y"], resamples=100)
    assert [(p.a, p.b) for p in pairs] == [("z", "x"), ("z", "y"), ("x", "y")]


def test_tasks_to_separate_by_hand_and_none_without_a_difference() -> None:
    # disagree on 8 of 40 (0.2), net 4 of 40 (0.1):
    # ((1.95996 * sqrt(.2) + 0.84162 * sqrt(.2 - .01)) / .1) ** 2 = 154.6
    assert tasks_to_separate(6, 2, 40) == 155
    assert tasks_to_separate(3, 3, 40) is None and tasks_to_separate(0, 0, 0) is None
    # a larger observed effect needs fewer tasks
    assert tasks_to_separate(8, 0, 40) < tasks_to_separate(6, 2, 40)


def test_a_strategy_without_a_model_has_no_token_ratio() -> None:
    results = results_of("A", [True, False], [0, 0]) + results_of("B", [True, True], [5, 5])
    row = pair_rows([pair(results, "A", "B", resamples=50)])[0]
    assert row[0] == "B vs A" and row[7] == "no model"


@pytest.mark.parametrize(
    ("interval", "expected", "verdict"),
    [
        ((0.10, 0.02, 0.20), "higher", "held"),
        ((0.05, -0.05, 0.15), "higher", "held in direction only"),
        ((-0.05, -0.15, 0.05), "higher", "did not hold"),
        ((-0.10, -0.20, -0.02), "lower", "held"),
        ((0.00, -0.10, 0.10), "lower", "did not hold"),
        ((0.05, -0.05, 0.15), "same", "held (no difference seen)"),
        ((0.10, 0.02, 0.20), "same", "did not hold"),
    ],
)
def test_a_published_direction_is_read_from_the_paired_interval(
    interval: tuple[float, float, float], expected: str, verdict: str
) -> None:
    p = Pair("a", "b", 40, *interval, 0, 0, 40, 1.0, None, None, None, None)
    assert direction(p, expected) == verdict
