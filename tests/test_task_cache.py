"""Task-scope recall from the in-process task cache (memory.chroma.recall): the same lessons,
order and scores as Chroma's query gives (`recall_by_query`, the path it replaced), under every
scope rule, and kept in step with every write to the store."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from memory import ChromaMemory, HashEmbedder
from memory.ranking import Ranking
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["loop", "sign", "index", "empty", "list", "bound", "round", "sort", "string", "zero"]
TASKS = [f"t{i}" for i in range(6)]


class SeededEmbedder:
    """A hash embedder without ties: each text's hash seeds a random unit vector. (A
    bag-of-words one ties many lessons at the candidates' cutoff, and which of them a query
    keeps is the index's choice, not the ranking's.)"""

    name, dim = "seeded-32", 32

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            vectors.append((v / np.linalg.norm(v)).tolist())
        return vectors


def random_lessons(rng: random.Random, n: int) -> list[Reflection]:
    return [
        Reflection(
            id=f"r{i:04d}",
            text=" ".join(rng.choices(WORDS, k=rng.randint(3, 9))) + f" case{i}",
            run_id=rng.choice(["R", "R", "other"]),
            strategy=rng.choice(["reflexion", "insights"]),
            env=rng.choice(["quad", "quad", "humaneval"]),
            task_id=rng.choice(TASKS),
            seed=rng.randint(0, 1),
            episode=rng.randint(1, 4),
            score=rng.random(),
            created=1_700_000_000.0 + rng.randint(0, 50),  # repeated times: ties by id
            kind=rng.choice(["reflection", "reflection", "rule"]),
        )
        for i in range(n)
    ]


def random_scope(rng: random.Random) -> RecallScope:
    return RecallScope(
        env=rng.choice(["quad", "humaneval"]),
        task_id=rng.choice(TASKS),
        run_id=rng.choice(["R", "new"]),
        strategy=rng.choice(["reflexion", "insights"]),
        seed=rng.randint(0, 1),
        episode=rng.randint(1, 5),
        stream=rng.random() < 0.3,
        kinds=rng.choice([("reflection",), ("rule",), ("reflection", "rule")]),
    )


def same(cached: list[Recalled], queried: list[Recalled]) -> bool:
    """The same lessons in the same order, with the same similarity and score (to float32)."""
    return [h.reflection for h in cached] == [h.reflection for h in queried] and all(
        abs((a.similarity or 0) - (b.similarity or 0)) < 1e-6
        and abs((a.score or 0) - (b.score or 0)) <= 2e-6
        for a, b in zip(cached, queried, strict=True)
    )


def assert_as_queried(memory: ChromaMemory, scope: RecallScope, text: str, k: int = 3) -> None:
    cached, queried = memory.recall(text, scope, k), memory.recall_by_query(text, scope, k)
    assert same(cached, queried), (scope, k, cached, queried)


@pytest.fixture
def memory(tmp_path: Path) -> ChromaMemory:
    m = ChromaMemory(tmp_path / "memory", embedder=HashEmbedder())
    yield m  # type: ignore[misc]
    m.close()


def by_rule(
    lessons: list[Reflection], e: SeededEmbedder, text: str, scope: RecallScope, k: int
) -> list[Recalled]:
    """Recall worked out by hand: every lesson `scope` admits, by similarity, then the ranking."""
    q = np.asarray(e.embed([text])[0])
    admitted = [r for r in lessons if scope.admits(r)]
    sims = {r.id: float(np.asarray(e.embed([r.text])[0]) @ q) for r in admitted}
    pool = sorted(admitted, key=lambda r: -sims[r.id])[: Ranking().candidates(k)]
    return Ranking().rank([Recalled(r, sims[r.id]) for r in pool], scope.task_id, k)


def test_task_scope_recall_equals_the_query_path_on_random_lessons(tmp_path: Path) -> None:
    rng, embedder = random.Random(7), SeededEmbedder()
    lessons, recalled = random_lessons(rng, 400), 0
    with ChromaMemory(tmp_path / "memory", embedder=embedder) as memory:
        memory.add(lessons)
        for _ in range(200):
            scope, k = random_scope(rng), rng.choice([1, 3, 5, 30])
            text = " ".join(rng.choices(WORDS, k=4))
            cached = memory.recall(text, scope, k)
            assert same(cached, by_rule(lessons, embedder, text, scope, k)), (scope, k)
            # subtle: RecallScope.where drops reflections when kinds names another kind too
            # (a reflection's row has no `kind`, and $in does not admit a missing key)
            if len(scope.kinds) == 1:
                queried = memory.recall_by_query(text, scope, k)
                assert same(cached, queried), (scope, k, cached, queried)
            recalled += len(cached)
    assert recalled > 300  # the scopes admitted lessons: the comparison was not of empty lists


def test_task_scope_recall_does_not_query_chroma_once_the_task_is_read(
    memory: ChromaMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.add(random_lessons(random.Random(1), 100))
    scope = RecallScope("quad", "t1", "new", "reflexion", 0, 1)
    first = memory.recall("loop bound", scope, 3)

    def no_query(*args: object, **kw: object) -> None:
        raise AssertionError("Chroma was queried")

    monkeypatch.setattr(memory._collection, "query", no_query)
    assert memory.recall("loop bound", scope, 3) == first
    with pytest.raises(AssertionError, match="queried"):  # global scope still asks Chroma
        memory.recall("loop bound", RecallScope("quad", "t1", "new", "r", 0, 1, "global"), 3)


def test_the_cache_follows_adds_edits_moves_and_deletes(memory: ChromaMemory) -> None:
    rng = random.Random(3)
    memory.add(random_lessons(rng, 60))
    scope = RecallScope("quad", "t1", "new", "reflexion", 0, 1, kinds=("reflection", "rule"))
    text = "the sign of the step"
    assert_as_queried(memory, scope, text)  # t1 is read into the cache here
    new = Reflection("z1", text, "other", "reflexion", "quad", "t1", 0, 1, 0.0, 1_800_000_000.0)
    memory.add([new])
    assert memory.recall(text, scope, 1)[0].reflection == new
    memory.add([Reflection(**{**vars(new), "text": "nothing alike here"})])  # an edit
    assert memory.recall(text, scope, 1)[0].reflection.id != "z1"
    assert_as_queried(memory, scope, text)
    memory.add([Reflection(**{**vars(new), "text": text, "task_id": "t2"})])  # moved to t2
    assert "z1" not in [h.reflection.id for h in memory.recall(text, scope, 30)]
    assert_as_queried(memory, scope, text, k=30)
    moved_back = Reflection(**{**vars(new), "text": text})
    memory.add([moved_back])
    assert memory.recall(text, scope, 1)[0].reflection == moved_back
    assert memory.delete(["z1"]) == 1
    assert "z1" not in [h.reflection.id for h in memory.recall(text, scope, 30)]
    assert_as_queried(memory, scope, text, k=30)


def test_a_write_through_another_object_on_the_folder_reaches_the_cache(
    memory: ChromaMemory,
) -> None:
    text = "off by one in the loop bound"
    lesson = Reflection("x1", text, "other", "reflexion", "quad", "t1", 0, 1, 0.0, 1e9)
    memory.add([lesson])
    scope = RecallScope("quad", "t1", "new", "reflexion", 0, 1)
    assert [h.reflection.id for h in memory.recall(text, scope, 3)] == ["x1"]
    assert memory.path is not None
    other = ChromaMemory.open(memory.path)  # as `reflexion memory forget` opens it
    other.delete(["x1"])
    other.close()
    assert memory.recall(text, scope, 3) == []


def test_the_cache_goes_with_the_last_writer_and_reopening_reads_the_store(
    tmp_path: Path,
) -> None:
    scope = RecallScope("quad", "t1", "new", "reflexion", 0, 1)
    first = Reflection("p1", "round the answer", "other", "reflexion", "quad", "t1", 0, 1, 0.0, 1e9)
    with ChromaMemory(tmp_path / "m", embedder=HashEmbedder()) as memory:
        memory.add([first])
        assert [h.reflection.id for h in memory.recall("round", scope, 3)] == ["p1"]
    # Another process writes while no one here holds the store.
    code = f"""
        from memory import ChromaMemory, HashEmbedder
        from reflexion.core.lesson_records import Reflection
        with ChromaMemory({str(tmp_path / "m")!r}, embedder=HashEmbedder()) as m:
            m.add([Reflection("p2", "round the answer up", "o", "reflexion", "quad", "t1", 0, 1,
                              0.0, 2e9)])
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with ChromaMemory(tmp_path / "m", embedder=HashEmbedder()) as memory:
        found = {h.reflection.id for h in memory.recall("round", scope, 3)}
    assert found == {"p1", "p2"}
