"""How a Chroma store recalls (mixed into ChromaMemory), without paying for Chroma's metadata
filter where it can be avoided.

A filtered query (`where`) costs about the same as scanning every row the filter admits: at 100k
lessons, 275 ms against 3 ms for the same query unfiltered (scripts/benchmark_recall.py). So a
recall first asks for the WIDEN x n nearest lessons of any provenance and keeps those the scope
admits (RecallScope.admits is the same rule as its filter). When n of them are admitted, they are
the n nearest admitted lessons, as the filtered query returns them (up to lessons tied at the
cutoff, and the index's approximation): every admitted lesson further out is further than all.
Only when fewer are admitted, and the store holds more
than were fetched, is the filtered query made.

    >>> hits = nearest_admitted(search, vector, scope, n=20)      # doctest: +SKIP

In task scope, a store this process alone writes recalls from the task's lessons kept in memory
instead: the task cache, below.

## The task cache

Task-scope recall without Chroma's metadata filter: a task's lessons, with their vectors, kept
in this process once a recall has asked for them, and ranked with numpy.

A filtered Chroma query costs about a scan of the rows the filter admits, and a recall in task
scope on a store of many tasks needs one: 164 ms at 100k lessons (scripts/benchmark_recall.py).
Here a task's first recall reads its lessons once (a filtered `get`, which skips the vector
index), and every later one looks at those few vectors only, as Chroma's cosine space does
(1 - the dot product of unit vectors, in float32), nearest first, ties to the lower id.

Only a process that alone writes a store may keep a cache of it: an embedded folder under its
StoreLock. Every write of that process (ChromaMemory.add_embedded and delete, whichever
ChromaMemory object on the folder makes it) updates the cache under the cache's lock, so a
recall sees what was written before it. The cache is shared by the process's writers of one
collection and dropped with the last of them, when the folder's lock is let go.

    >>> cache = TaskCache()
    >>> r = Reflection("r1", "check the sign", "run", "reflexion", "quad", "t1", 0, 2, -1.5, 1e9)
    >>> cache.fill("t1", [r], [[1.0, 0.0]])
    >>> scope = RecallScope("quad", "t1", "another-run", "reflexion", 0, 1)
    >>> [(h.reflection.id, h.similarity) for h in cache.nearest("t1", [0.0, 2.0], scope, 20)]
    [('r1', 0.0)]
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from memory.chroma.rows import Filters, from_columns, passes, to_metadata, where_of
from memory.ranking import Ranking
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection

if TYPE_CHECKING:  # numpy loads at the first recall, not with `--help` (tests/test_layout.py)
    import numpy as np
    from chromadb.api.types import Where

Lessons = dict[str, tuple[Reflection, "np.ndarray"]]  # id -> (reflection, unit vector)


class TaskCache:
    """The lessons of the tasks recalled so far, by task id. `lock` is held around a write to
    the store and its `put`/`drop` here, and around a task's `fill`, so that neither misses the
    other."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._tasks: dict[str, Lessons] = {}

    def clear(self) -> None:
        """Forget every task (a write failed part way: what it left is unknown)."""
        self._tasks.clear()

    def has(self, task_id: str) -> bool:
        return task_id in self._tasks

    def fill(self, task_id: str, reflections: Sequence[Reflection], vectors: Any) -> None:
        """Every stored lesson of `task_id`, read from the store."""
        self._tasks[task_id] = {
            r.id: (r, _unit(v)) for r, v in zip(reflections, vectors, strict=True)
        }

    def put(self, reflections: Sequence[Reflection], vectors: Sequence[Any]) -> None:
        """Lessons just written (an upsert): in their task if it is cached, out of any other."""
        self.drop([r.id for r in reflections])
        for r, v in zip(reflections, vectors, strict=True):
            if r.task_id in self._tasks:
                self._tasks[r.task_id][r.id] = (_as_stored(r), _unit(v))

    def drop(self, ids: Sequence[str]) -> None:
        """Lessons just deleted (or about to be replaced)."""
        for lessons in self._tasks.values():
            for rid in ids:
                lessons.pop(rid, None)

    def nearest(
        self, task_id: str, vector: Sequence[float], scope: RecallScope, n: int
    ) -> list[Recalled]:
        """The n lessons of a filled task nearest to `vector` that `scope` admits, nearest first,
        with Chroma's similarity."""
        admitted = [(r, v) for r, v in self._tasks[task_id].values() if scope.admits(r)]
        if not admitted or n <= 0:
            return []
        # As Chroma's cosine space: a distance of 1 - dot in float32, the similarity 1 - that.
        import numpy as np

        distance = np.float32(1.0) - np.stack([v for _, v in admitted]) @ _unit(vector)
        order = sorted(range(len(admitted)), key=lambda i: (distance[i], admitted[i][0].id))
        return [Recalled(admitted[i][0], 1.0 - float(distance[i])) for i in order[:n]]


def _unit(vector: Any) -> np.ndarray:
    import numpy as np

    v = np.asarray(vector, dtype=np.float32)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v  # subtle: a zero vector stays zero, as in Chroma's index


def _as_stored(r: Reflection) -> Reflection:
    # What the store gives back for `r` (its row's fields), so a cached lesson equals a read one.
    return from_columns({"ids": [r.id], "documents": [r.text], "metadatas": [to_metadata(r)]})[0]


_SHARED: dict[tuple[Path, str], list[Any]] = {}  # (folder, collection) -> [TaskCache, holders]
_SHARED_LOCK = threading.Lock()


class CacheHold:
    """A writer's hold on the task cache of one collection in an embedded folder, shared with
    the process's other writers of it; let go on close or when the writer is collected."""

    def __init__(self, path: Path, collection: str) -> None:
        key = (path.resolve(), collection)
        with _SHARED_LOCK:
            held = _SHARED.setdefault(key, [TaskCache(), 0])
            held[1] += 1
        self.cache: TaskCache = held[0]
        self._let_go = weakref.finalize(self, _let_go, key)

    def close(self) -> None:
        self._let_go()


def shared_cache(path: Path | None, collection: str) -> TaskCache | None:
    """The cache this process's writers keep of a collection, if any: a write through any
    ChromaMemory on the folder must update it."""
    if path is None:
        return None
    with _SHARED_LOCK:
        held = _SHARED.get((path.resolve(), collection))
    return None if held is None else held[0]


def _let_go(key: tuple[Path, str]) -> None:
    with _SHARED_LOCK:
        held = _SHARED[key]
        held[1] -= 1
        if held[1] == 0:
            del _SHARED[key]


WIDEN = 4
Search = Callable[[Sequence[float], int, Any], list[Recalled]]  # vector, n, where -> nearest


def nearest_admitted(
    search: Search, vector: Sequence[float], scope: RecallScope, n: int, stored: int
) -> list[Recalled]:
    """The n lessons nearest to `vector` that `scope` admits, nearest first, from a store that
    holds `stored` lessons."""
    wide = search(vector, WIDEN * n, None)
    admitted = [h for h in wide if scope.admits(h.reflection)]
    if len(admitted) >= n or len(wide) >= stored:  # enough, or every lesson was looked at
        return admitted[:n]
    # subtle: the filter cannot see a board's rewrites (`edited_on`), so `admits` has the last word
    return [h for h in search(vector, n, scope.where()) if scope.admits(h.reflection)]


class _Store(Protocol):
    """What recall needs of the store (ChromaMemory)."""

    ranking: Ranking
    _tasks: CacheHold | None
    _collection: Any

    def _calling(self) -> AbstractContextManager[None]: ...

    def _embed(self, texts: list[str]) -> list[list[float]]: ...

    def _query(self, text: str, k: int, where: Where | None) -> list[Recalled]: ...

    def _search(self, vector: Sequence[float], k: int, where: Where | None) -> list[Recalled]: ...

    def _query_nearest(
        self, vector: Sequence[float], scope: RecallScope, n: int
    ) -> list[Recalled]: ...

    def _task_nearest(
        self, cache: TaskCache, vector: Sequence[float], scope: RecallScope, n: int
    ) -> list[Recalled]: ...


class Filtered:
    """A scope narrowed by a filter on metadata or provenance (memory.chroma.rows.conditions):
    it admits what both admit, and its `where` is both filters, so recall treats it as a scope.

        >>> scope = RecallScope("quad", "t1", "run", "reflexion", 0, 1)
        >>> Filtered(scope, {"user": "alice"}).where()["$and"][-1]
        {'meta.user': {'$eq': 'alice'}}
    """

    def __init__(self, scope: RecallScope, filters: Filters) -> None:
        self.inner, self.filters = scope, filters
        self._where = where_of(filters)  # checked now: a bad filter fails before any query

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # the scope's every other field, as it is

    def admits(self, r: Reflection) -> bool:
        return self.inner.admits(r) and passes(r, self.filters)

    def where(self) -> dict[str, Any]:
        return {"$and": [self.inner.where(), self._where]} if self._where else self.inner.where()


class Recalling:
    """A Chroma store's recall: the run's `recall`, and `nearest` for --dedup."""

    def recall(
        self: _Store, text: str, scope: RecallScope, k: int, filters: Filters | None = None
    ) -> list[Recalled]:
        """Up to k reflections that `scope` admits (and, with `filters`, that pass them), best
        first by the memory's Ranking: similarity to `text`, the asking task's own lessons,
        recent ones. In task scope, on a store this process alone writes, from the task's
        lessons in memory (the task cache)."""
        if filters:
            scope = cast("RecallScope", Filtered(scope, filters))  # the same two methods
        vector = self._embed([text])[0]
        n = self.ranking.candidates(k)
        tasks = self._tasks  # subtle: read once, a close may set it to None meanwhile
        if tasks is not None and scope.scope == "task":
            hits = self._task_nearest(tasks.cache, vector, scope, n)
        else:
            hits = self._query_nearest(vector, scope, n)
        return self.ranking.rank(hits, scope.task_id, k)

    def recall_by_query(self: _Store, text: str, scope: RecallScope, k: int) -> list[Recalled]:
        """`recall` as Chroma's nearest-neighbour query answers it, in any scope: the path of
        global scope, and of task scope before the task cache (which is checked against it, and
        timed against it by scripts/benchmark_recall.py).

            >>> [h.reflection.id for h in m.recall_by_query("off by one", s, 2)]  # doctest: +SKIP
            ['3f9a0c1d2e4b5a69', '41c0e2d9a7b3f815']
        """
        hits = self._query_nearest(self._embed([text])[0], scope, self.ranking.candidates(k))
        return self.ranking.rank(hits, scope.task_id, k)

    def nearest(self: _Store, text: str, scope: RecallScope) -> Recalled | None:
        """The lesson `scope` admits that is most similar to `text` (by similarity alone)."""
        found = self._query(text, WIDEN, cast("Where", scope.where()))
        return next((h for h in found if scope.admits(h.reflection)), None)

    def _query_nearest(
        self: _Store, vector: Sequence[float], scope: RecallScope, n: int
    ) -> list[Recalled]:
        # the scope's filter only if it must (nearest_admitted)
        with self._calling():
            stored = self._collection.count()
        return nearest_admitted(self._search, vector, scope, n, stored)

    def _task_nearest(
        self: _Store, cache: TaskCache, vector: Sequence[float], scope: RecallScope, n: int
    ) -> list[Recalled]:
        with cache.lock:  # held from reading the task's lessons to ranking them: no write between
            if not cache.has(scope.task_id):
                with self._calling():
                    res = self._collection.get(
                        where={"task_id": scope.task_id},
                        include=["embeddings", "documents", "metadatas"],
                    )
                vectors = res["embeddings"] if res["embeddings"] is not None else []
                cache.fill(scope.task_id, from_columns(res), vectors)
            return cache.nearest(scope.task_id, vector, scope, n)
