"""The Memory contract, run against every registered backend: what a user of any store can rely
on, the best-keeping invariant of every strategy on each of them included."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator

import pytest
from drill import run_trial
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.quadratic import Problem
from memory import BACKENDS, ChromaMemory, HashEmbedder, WindowMemory
from reflexion.core.lesson_records import RecallScope, Reflection
from reflexion.core.protocols import Memory
from reflexion.strategies import STRATEGIES

MakeMemory = Callable[[], Memory]
MAKERS = {  # backend name -> factory of empty stores of that kind, given a folder for them
    "window": lambda path: WindowMemory,
    "chroma": lambda path: (
        lambda: ChromaMemory(path, embedder=HashEmbedder(), collection=f"c-{uuid.uuid4().hex}")
    ),
}


def test_every_registered_backend_runs_this_contract() -> None:
    assert set(MAKERS) == set(BACKENDS)


@pytest.fixture(scope="module", params=sorted(MAKERS))
def make_memory(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MakeMemory]:
    """A factory of EMPTY memories of one kind. Module-scoped so hypothesis examples can each
    take a fresh store (Chroma: a new collection in one on-disk store, cheaper than a new dir)."""
    yield MAKERS[request.param](tmp_path_factory.mktemp(request.param))


@pytest.fixture
def mem(make_memory: MakeMemory) -> Memory:
    return make_memory()


_ids = itertools.count()


def refl(**kw: object) -> Reflection:
    """A reflection from run R, strategy reflexion, env quad, task t1, seed 0, episode 1."""
    base: dict[str, object] = dict(
        id=f"r{next(_ids)}",
        text="check the sign of the step",
        run_id="R",
        strategy="reflexion",
        env="quad",
        task_id="t1",
        seed=0,
        episode=1,
        score=-1.0,
        created=1_700_000_000.0,
    )
    base.update(kw)
    return Reflection(**base)  # type: ignore[arg-type]


SCOPE = RecallScope(env="quad", task_id="t1", run_id="R", strategy="reflexion", seed=0, episode=3)


def ids(recalled: list[object]) -> set[str]:
    return {r.reflection.id for r in recalled}  # type: ignore[attr-defined]


# -- storage -----------------------------------------------------------------------------------


def test_add_get_round_trips_every_field(mem: Memory) -> None:
    r = refl(
        text="Ünïcode lesson:\n  the loop ran\tone step too far ✓",
        run_id="2024-05-01-abc",
        strategy="reflexion-window",
        env="humaneval",
        task_id="HumanEval/41",
        seed=2**40 + 7,
        episode=17,
        score=-0.12345678901234567,
        created=1_714_557_600.123456,
    )
    # Chroma 1.5.9 alone returns this float one ulp off and drops -inf.
    crashed = refl(score=float("-inf"), created=900719925.7265625)
    mem.add([r, crashed])
    assert mem.get(r.id) == r
    assert mem.get(crashed.id) == crashed
    assert mem.reflections() == [crashed, r]


@settings(max_examples=15, deadline=None)
@given(
    text=st.text(max_size=60),
    label=st.text(min_size=0, max_size=20),
    seed=st.integers(-(2**63), 2**63 - 1),
    score=st.floats(allow_nan=False),  # -inf is a plausible score for a crashing candidate
    created=st.floats(min_value=0, max_value=4e9),
)
def test_round_trip_any_values(
    make_memory: MakeMemory, text: str, label: str, seed: int, score: float, created: float
) -> None:
    mem = make_memory()
    r = refl(text=text, run_id=label, task_id=label, seed=seed, score=score, created=created)
    mem.add([r])
    assert mem.get(r.id) == r


def test_adding_same_id_twice_keeps_one_latest(mem: Memory) -> None:
    r = refl()
    mem.add([r])
    mem.add([r])
    newer = refl(id=r.id, text="a revised lesson")
    mem.add([newer, newer])
    assert mem.reflections() == [newer]
    assert [x.reflection for x in mem.recall("lesson", SCOPE, k=5)] == [newer]


def test_reflections_are_sorted_oldest_first(mem: Memory) -> None:
    late, early = refl(created=30.0), refl(created=10.0)
    tie_b, tie_a = refl(id="b", created=20.0), refl(id="a", created=20.0)
    mem.add([late, early, tie_b, tie_a])
    assert mem.reflections() == [early, tie_a, tie_b, late]


def test_empty_store(mem: Memory) -> None:
    assert mem.recall("anything", SCOPE, k=3) == []
    assert mem.search("anything", k=3) == []
    assert mem.reflections() == []
    assert mem.get("nope") is None
    assert mem.delete(["nope"]) == 0
    assert mem.delete([]) == 0


def test_delete_counts_only_existing_and_forgets(mem: Memory) -> None:
    a, b, c = refl(), refl(), refl()
    mem.add([a, b, c])
    assert mem.delete([a.id, a.id, "missing"]) == 1
    assert mem.get(a.id) is None
    assert mem.reflections() == [b, c] or mem.reflections() == [c, b]
    assert a.id not in ids(mem.recall("sign", SCOPE, k=10)) | ids(mem.search("sign", k=10))
    assert mem.delete([b.id, c.id]) == 2
    assert mem.reflections() == []


# -- recall: scope and k ----------------------------------------------------------------------


def test_recall_respects_k(mem: Memory) -> None:
    mem.add([refl(run_id="other", text=f"lesson number {i}") for i in range(6)])
    assert len(mem.recall("lesson", SCOPE, k=2)) == 2
    assert len(mem.recall("lesson", SCOPE, k=100)) == 6
    assert mem.recall("lesson", SCOPE, k=0) == []
    assert len(mem.search("lesson", k=4)) == 4


def test_recall_sees_only_what_the_scope_admits(mem: Memory) -> None:
    earlier = refl(episode=1)
    cases = {
        "earlier episode, same run+seed": (earlier, True, True),
        "same episode": (refl(episode=3), False, False),
        "later episode (a resumed run's future)": (refl(episode=4), False, False),
        "other seed of the same run": (refl(seed=1), False, False),
        "other strategy of the same run": (refl(strategy="reflexion-window"), False, False),
        "other run, even a later episode": (refl(run_id="older-run", episode=9), True, True),
        "other env": (refl(env="gsm8k", run_id="older-run"), False, False),
        "same run+seed, other task, later episode": (refl(task_id="t2", episode=9), False, False),
        "same run+seed, other task, earlier episode": (refl(task_id="t2", episode=1), False, True),
        "other run, other task": (refl(task_id="t2", run_id="older-run"), False, True),
        "other task, same run, other seed": (refl(task_id="t2", seed=1), False, False),
    }
    mem.add([r for r, _, _ in cases.values()])
    task_ids = ids(mem.recall("sign", SCOPE, k=100))
    glob = RecallScope(**{**SCOPE.to_dict(), "scope": "global"})
    global_ids = ids(mem.recall("sign", glob, k=100))
    for what, (r, in_task, in_global) in cases.items():
        assert (r.id in task_ids) == in_task, f"task scope, {what}"
        assert (r.id in global_ids) == in_global, f"global scope, {what}"


def test_search_ignores_provenance(mem: Memory) -> None:
    everything = [refl(env="gsm8k"), refl(seed=5), refl(episode=9)]
    mem.add(everything)
    assert ids(mem.search("sign", k=10)) == {r.id for r in everything}


_pick = st.sampled_from
_reflections = st.lists(
    st.builds(
        lambda *a: a,
        _pick(["quad", "gsm8k"]),
        _pick(["t1", "t2", "t3"]),
        _pick(["R", "old"]),
        _pick(["reflexion", "reflexion-window"]),
        _pick([0, 1]),
        st.integers(1, 4),
        _pick(["sign error", "off by one", "loop bound", "wrong unit"]),
    ),
    max_size=25,
)
_scopes = st.builds(
    RecallScope,
    env=_pick(["quad", "gsm8k"]),
    task_id=_pick(["t1", "t2", "t3"]),
    run_id=_pick(["R", "old"]),
    strategy=_pick(["reflexion", "reflexion-window"]),
    seed=_pick([0, 1]),
    episode=st.integers(1, 5),
    scope=_pick(["task", "global"]),
    stream=st.booleans(),
)


@settings(max_examples=30, deadline=None)
@given(rows=_reflections, scope=_scopes, k=st.integers(1, 8))
def test_recall_agrees_with_scope_admits(
    make_memory: MakeMemory, rows: list[tuple[object, ...]], scope: RecallScope, k: int
) -> None:
    stored = [
        refl(id=f"x{i}", env=e, task_id=t, run_id=run, strategy=s, seed=sd, episode=ep, text=txt)
        for i, (e, t, run, s, sd, ep, txt) in enumerate(rows)
    ]
    mem = make_memory()
    mem.add(stored)
    admitted = [r for r in stored if scope.admits(r)]
    got = mem.recall("off by one sign", scope, k)
    assert ids(got) <= {r.id for r in admitted}
    assert len(got) == min(k, len(admitted))
    if isinstance(mem, WindowMemory):
        assert [x.reflection for x in got] == admitted[-k:]  # the window: last k, oldest first
    else:  # the ranking's best k among the scope's most similar lessons (memory.ranking)
        from memory.ranking import Ranking

        every = mem.search("off by one sign", k=len(stored) or 1)
        admitted_hits = [h for h in every if scope.admits(h.reflection)]
        pool = admitted_hits[: Ranking().candidates(k)]
        expected = Ranking().rank(pool, scope.task_id, k)
        # ties in similarity may pick either of two equal lessons: compare scores, then ids
        assert [x.score for x in got] == pytest.approx([x.score for x in expected])


# -- best-keeping: every strategy, on this memory --------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    strategy=st.sampled_from(sorted(STRATEGIES)),
    target=st.lists(st.floats(min_value=-5, max_value=5), min_size=1, max_size=5),
    a=st.floats(min_value=0.05, max_value=0.95),
    budget=st.integers(min_value=1, max_value=6),
    seed=st.integers(min_value=0, max_value=10),
)
def test_best_score_never_decreases(
    make_memory: MakeMemory, strategy: str, target: list[float], a: float, budget: int, seed: int
) -> None:
    trial, _ = run_trial(strategy, Problem(tuple(target), a), budget, seed, make_memory())
    result = trial.result()
    curve = result.curve
    assert 1 <= len(curve) <= budget
    best = [p.best_score for p in curve]
    assert best == sorted(best)  # monotone
    assert all(b == max(p.score for p in curve[: i + 1]) for i, b in enumerate(best))
    assert result.best_score == best[-1]
