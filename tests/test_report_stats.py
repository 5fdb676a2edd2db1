"""The report's numbers, checked against values worked out by hand."""

from __future__ import annotations

import pytest

from reflexion.core.records import Point, TaskResult
from reflexion.report.build import summarize
from reflexion.report.stats import (
    bootstrap_mean,
    cost_curve,
    cost_unit,
    episode_curve,
    per_solved,
    success_rate,
)


def trial(
    task: str,
    states: list[tuple[bool, int]],
    strategy: str = "A",
    seed: int = 0,
    calls_per_episode: int = 2,
) -> TaskResult:
    """A trial from (best_passed, cumulative tokens) after each episode."""
    curve = tuple(
        Point(e, 0.0, 0.0, passed, passed, tokens, calls_per_episode * e - 1)
        for e, (passed, tokens) in enumerate(states, start=1)
    )
    last = curve[-1]
    return TaskResult(
        run_id="r",
        env="e",
        task_id=task,
        strategy=strategy,
        seed=seed,
        best_candidate="x",
        best_score=0.0,
        best_episode=len(curve),
        final_passed=last.best_passed,
        any_passed=any(p.passed for p in curve),
        attempts=len(curve),
        llm_calls=last.calls,
        input_tokens=last.tokens - 10,
        output_tokens=10,
        wall_s=0.1,
        curve=curve,
    )


F, T = False, True
HAND = [
    trial("t0", [(F, 100), (T, 250)]),  # solved at episode 2, then stopped
    trial("t1", [(T, 80)]),  # solved at once
    trial("t2", [(F, 100), (F, 200), (F, 300)]),  # never
    trial("t3", [(F, 50), (F, 150), (T, 400)]),  # at the last episode
    # passes at episode 1, then a better VISIBLE score replaces it with a failing candidate
    trial("t4", [(T, 90), (F, 180)]),
]


def test_success_by_episode_follows_the_best_so_far_and_keeps_the_last_state() -> None:
    curve = episode_curve(HAND, 3)
    assert curve.x == (1.0, 2.0, 3.0)
    # ep1: t1, t4 | ep2: t0, t1 (t4 lost it) | ep3: t0, t1, t3
    assert curve.y == pytest.approx((2 / 5, 2 / 5, 3 / 5))
    assert all(lo <= y <= hi for lo, y, hi in zip(curve.low, curve.y, curve.high))


def test_success_by_tokens_is_the_state_within_each_budget() -> None:
    curve = cost_curve(HAND, "tokens", budget=400)
    got = dict(zip(curve.x, curve.y))
    expected = {0: 0, 50: 0, 80: 1, 90: 2, 100: 2, 150: 2, 180: 1, 200: 1, 250: 2, 300: 2, 400: 3}
    assert got == pytest.approx({float(k): v / 5 for k, v in expected.items()})


def test_cost_per_solved_task_divides_all_cost_by_the_final_solves() -> None:
    # tokens: 250 + 80 + 300 + 400 + 180 = 1210 over 3 final solves (t0, t1, t3)
    assert per_solved(HAND, lambda r: r.input_tokens + r.output_tokens) == pytest.approx(1210 / 3)
    # calls (2e - 1): 3 + 1 + 5 + 5 + 3 = 17
    assert per_solved(HAND, lambda r: r.llm_calls) == pytest.approx(17 / 3)
    assert per_solved([trial("t2", [(F, 10)])], lambda r: r.llm_calls) is None


def test_summary_puts_final_and_any_attempt_side_by_side() -> None:
    (s,) = summarize(HAND, episodes=3)
    assert s.final_success == pytest.approx(3 / 5) and s.any_success == pytest.approx(4 / 5)
    assert s.final_low <= s.final_success <= s.final_high
    assert s.tokens_per_solved == pytest.approx(1210 / 3)
    assert s.mean_tokens == pytest.approx(1210 / 5) and s.mean_calls == pytest.approx(17 / 5)
    assert s.cost_unit == "tokens" and s.by_cost.x[-1] == 400
    assert s.by_episode.y == pytest.approx((0.4, 0.4, 0.6))


def test_seeds_of_a_task_are_averaged_before_averaging_tasks() -> None:
    results = [
        trial("a", [(T, 1)], seed=0),
        trial("a", [(F, 1)], seed=1),
        trial("b", [(T, 1)], seed=0),
        trial("b", [(T, 1)], seed=1),
        trial("c", [(F, 1)], seed=0),
        trial("c", [(F, 1)], seed=1),
    ]
    assert success_rate(results, lambda r: r.final_passed).value == pytest.approx(0.5)
    assert episode_curve(results, 1).y == pytest.approx((0.5,))
    lopsided = [*results[:3], trial("b", [(T, 1)], seed=2)]  # b has three seeds, a two
    assert success_rate(lopsided, lambda r: r.final_passed).value == pytest.approx(0.75)


def test_bootstrap_interval_holds_the_estimate_and_shrinks_with_more_tasks() -> None:
    few = bootstrap_mean([1.0, 0.0, 1.0, 1.0] * 2)
    many = bootstrap_mean([1.0, 0.0, 1.0, 1.0] * 50)
    for rate in (few, many):
        assert rate.value == pytest.approx(0.75)
        assert 0.0 <= rate.low < rate.value < rate.high <= 1.0
    assert many.high - many.low < (few.high - few.low) / 3
    assert bootstrap_mean([1.0, 0.0, 1.0, 1.0] * 2) == few  # a fixed seed: reproducible
    assert bootstrap_mean([1.0, 1.0, 1.0]).to_dict() == {"value": 1.0, "low": 1.0, "high": 1.0}


def test_the_cost_axis_falls_back_from_tokens_to_calls_to_none() -> None:
    assert cost_unit(HAND) == "tokens"
    no_tokens = [
        TaskResult.from_dict(r.to_dict() | {"input_tokens": 0, "output_tokens": 0}) for r in HAND
    ]
    assert cost_unit(no_tokens) == "LLM calls"
    scripted = [TaskResult.from_dict(r.to_dict() | {"llm_calls": 0}) for r in no_tokens]
    assert cost_unit(scripted) is None
    (s,) = summarize(scripted)
    assert s.cost_unit is None and s.by_cost.x == ()
