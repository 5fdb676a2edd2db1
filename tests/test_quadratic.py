"""The drill env: the math of the reflection step, and feedback that converges (the best-keeping
invariant, over every strategy and every memory, is in test_memory_contract.py)."""

from __future__ import annotations

import math

import pytest
from drill import run_trial
from hypothesis import given
from hypothesis import strategies as st

from envs.quadratic import Problem, QuadraticEnv, gradient_step, parse_vector
from memory.window import WindowMemory
from reflexion.core.errors import UsageError

coords = st.floats(min_value=-50, max_value=50, allow_nan=False)


@given(
    x=st.lists(coords, min_size=1, max_size=6),
    shift=st.lists(st.floats(min_value=0.01, max_value=20), min_size=6, max_size=6),
    a=st.floats(min_value=0.01, max_value=0.99),
)
def test_each_gradient_step_strictly_reduces_the_distance(x, shift, a) -> None:
    t = [xi + s for xi, s in zip(x, shift)]
    gradient = [2 * (ti - xi) for xi, ti in zip(x, t)]
    step = gradient_step(x, gradient, a)
    before = sum((xi - ti) ** 2 for xi, ti in zip(x, t))
    after = sum((xi - ti) ** 2 for xi, ti in zip(step, t))
    assert after < before
    assert math.isclose(after, (1 - 2 * a) ** 2 * before, rel_tol=1e-6, abs_tol=1e-9)


def test_vectors_round_trip_through_text() -> None:
    assert parse_vector("I think x = [1, -2.5e-3, 3]", 3) == [1.0, -0.0025, 3.0]
    assert parse_vector("[1, 2] then [3, 4, 5]", 2) == [1.0, 2.0]  # the last one of the right size
    assert parse_vector("no vector here", 2) is None


def test_unparseable_candidate_is_a_failed_attempt_not_a_crash() -> None:
    env = QuadraticEnv()
    score = env.score(env.tasks()[1], "forty-two")
    assert not score.solved and "not a vector" in score.feedback


def test_the_target_only_appears_in_the_held_out_feedback() -> None:
    env = QuadraticEnv([Problem((1.5, -2.25), 0.3)])
    task = env.tasks()[0]
    assert "1.5" not in task.prompt and "-2.25" not in env.score(task, "[0, 0]").feedback
    assert "[1.5, -2.25]" in env.evaluate(task, "[0, 0]").feedback


def test_env_spec_bounds_are_checked() -> None:
    assert len(QuadraticEnv.from_spec("3").tasks()) == 3
    with pytest.raises(UsageError, match="between 1 and 100"):
        QuadraticEnv.from_spec("0")


@pytest.mark.parametrize("strategy", ["self-refine", "reflexion-window"])
def test_feedback_strategies_converge_like_gradient_ascent(strategy: str) -> None:
    # a = 0.25 halves the distance per step: from ~3 away, 6 candidates get within sqrt(0.05).
    trial, steps = run_trial(strategy, Problem((3.0, -1.0), 0.25), 6, 0, WindowMemory())
    scores = [p.score for p in trial.result().curve]
    assert all(b > a for a, b in zip(scores, scores[1:]))  # every refinement improves
    assert trial.result().final_passed
    single, _ = run_trial("single", Problem((3.0, -1.0), 0.25), budget=6, seed=0)
    assert not single.result().final_passed
