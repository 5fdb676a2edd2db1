"""Recall takes the nearest lessons unfiltered and filters them itself, and makes Chroma's
(slow) filtered query only when too few were admitted: the same lessons either way."""

from __future__ import annotations

from typing import Any

import pytest

from memory.chroma.recall import WIDEN, nearest_admitted
from memory.chroma.store import ChromaMemory
from memory.embedders import HashEmbedder
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection


def lesson(i: int, task: str, run: str = "old") -> Reflection:
    words = ("loop", "bound", "sign", "index", "empty", "list", "round", "sort")
    text = f"lesson {i}: the {words[i % 8]} and the {words[(i * 3) % 7]}, case w{i % 97}"
    return Reflection(f"r{i:04d}", text, run, "reflexion", "env", task, 0, 1, 0.5, 1e9 + i)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("filtering")
    memory = ChromaMemory(path, embedder=HashEmbedder(dim=64))
    memory.add([lesson(i, f"t{i % 30}", "old" if i % 3 else "now") for i in range(600)])
    yield memory
    memory.close()


@pytest.mark.parametrize("scope", ["task", "global"])
@pytest.mark.parametrize("query", ["loop bound case 7", "empty list sort", "sign"])
def test_the_same_lessons_as_the_filtered_query(store: Any, scope: str, query: str) -> None:
    asking = RecallScope("env", "t4", "now", "reflexion", 0, 1, scope=scope)
    n = store.ranking.candidates(3)
    vector = store.embedder.embed([query])[0]
    filtered = store._rows.search(vector, n, asking.where())
    mine = nearest_admitted(store._rows.search, vector, asking, n, 600)
    # the same similarities, nearest first (lessons tied at the cutoff may be either one)
    assert [round(h.similarity or 0, 6) for h in mine] == [
        round(h.similarity or 0, 6) for h in filtered
    ]
    assert len(mine) == n and all(asking.admits(h.reflection) for h in mine)


def test_the_filtered_query_is_made_only_when_too_few_are_admitted() -> None:
    asks: list[Any] = []
    near = [Recalled(lesson(i, "t1" if i < 5 else "t2"), 1.0 - i / 100) for i in range(40)]

    def search(vector: Any, n: int, where: Any) -> list[Recalled]:
        asks.append(where)
        return near[:n]

    mine = RecallScope("env", "t1", "now", "reflexion", 0, 1, scope="global")
    assert len(nearest_admitted(search, [0.0], mine, 5, 1000)) == 5 and asks == [None]
    own = RecallScope("env", "t1", "now", "reflexion", 0, 1, scope="task")
    nearest_admitted(search, [0.0], own, 10, 1000)  # 5 of the 40 are t1's: ask Chroma to filter
    assert asks[1] is None and asks[2] == own.where() and len(asks) == 3
    asks.clear()
    nearest_admitted(search, [0.0], own, 20, 40)  # the store has only 40: all were looked at
    assert asks == [None] and len(near) < WIDEN * 20
