"""How the vector memory ranks admitted lessons: the score formula by hand, the asking task's
own lessons and recent ones preferred, and a real Chroma store ranking that way."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import HashEmbedder
from memory.chroma.store import ChromaMemory
from memory.ranking import Ranking, parse_ranking
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection


def lesson(i: int, task: str, created: float, text: str = "x", run: str = "old") -> Reflection:
    return Reflection(f"r{i}", text, run, "reflexion", "e", task, 0, 1, 0.0, created)


def test_the_score_by_hand() -> None:
    hits = [
        Recalled(lesson(1, "mine", 1.0), 0.50),  # own task, oldest: .50 + .25 + 0 = .75
        Recalled(lesson(2, "other", 2.0), 0.70),  # middle: .70 + .2 * .5 = .80
        Recalled(lesson(3, "other", 3.0), 0.65),  # newest: .65 + .2 = .85
    ]
    ranked = Ranking().rank(hits, "mine", k=3)
    assert [(h.reflection.id, h.score) for h in ranked] == [("r3", 0.85), ("r2", 0.8), ("r1", 0.75)]
    assert [h.similarity for h in ranked] == [0.65, 0.70, 0.50]  # similarity kept as it was


def test_weights_zero_is_similarity_alone_and_k_cuts() -> None:
    hits = [Recalled(lesson(i, "t", float(i)), s) for i, s in enumerate([0.2, 0.9, 0.5])]
    ranked = parse_ranking("similarity").rank(hits, "t", k=2)
    assert [h.reflection.id for h in ranked] == ["r1", "r2"]


def test_the_newest_of_a_tasks_lessons_wins_a_near_tie() -> None:
    hits = [Recalled(lesson(i, "t", float(i)), 0.80 - 0.01 * i) for i in range(4)]
    assert Ranking().rank(hits, "t", k=1)[0].reflection.id == "r3"  # newest, slightly less similar


@pytest.mark.parametrize("bad", ["task=x", "speed=1", "task"])
def test_bad_weights_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="expected"):
        parse_ranking(bad)


def test_a_chroma_store_ranks_the_scopes_lessons_by_the_score(tmp_path: Path) -> None:
    theirs = [lesson(i, "other", float(i), f"off by one in loop {i}") for i in range(3)]
    mine = lesson(9, "mine", 0.5, "the loop bound was wrong by one at the end")
    query = "off by one in the loop bound"
    scope = RecallScope("e", "mine", "new", "reflexion", 0, 2, scope="global")
    with ChromaMemory(tmp_path / "m", embedder=HashEmbedder()) as m:
        m.add([*theirs, mine])
        every = m.search(query, k=10)  # similarity alone, any provenance
        got = m.recall(query, scope, k=2)  # the default ranking
        expected = Ranking().rank(every, "mine", k=2)
        assert [(h.reflection.id, h.score) for h in got] == [
            (h.reflection.id, h.score) for h in expected
        ]
        m.ranking = Ranking(task=3.0)  # more than any difference in cosine similarity
        assert m.recall(query, scope, k=1)[0].reflection.id == "r9"
        m.ranking = parse_ranking("similarity")
        top = m.recall(query, scope, k=1)[0]
        assert top.similarity == max(h.similarity or 0.0 for h in every)
