"""How a Chroma store recalls (Recall, a part of ChromaMemory), without paying for Chroma's metadata
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

The task cache (memory.chroma.tasks) answers task scope on a store this process alone writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from memory.chroma.filters import Filters, passes, where_of
from memory.chroma.rows import from_columns
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection

if TYPE_CHECKING:
    from chromadb.api.types import Where

    from memory.chroma.rows import Rows
    from memory.chroma.tasks import TaskCache

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


@dataclass(frozen=True)
class Recall:
    """A Chroma store's recall over its rows (memory.chroma.rows.Rows): the candidates a run's
    recall ranks, and `nearest` for --dedup. The store ranks them (ChromaMemory.recall).

        >>> hits = Recall(rows).candidates(vector, scope, 20, cache=None)  # doctest: +SKIP
    """

    rows: Rows

    def candidates(
        self, vector: Sequence[float], scope: RecallScope, n: int, cache: TaskCache | None
    ) -> list[Recalled]:
        """The n lessons nearest to `vector` that `scope` admits: from the task cache where one
        is given and the scope is the task's, else from Chroma's nearest-neighbour query."""
        if cache is not None and scope.scope == "task":
            return self._task_nearest(cache, vector, scope, n)
        return nearest_admitted(self.rows.search, vector, scope, n, self.rows.count())

    def nearest(self, vector: Sequence[float], scope: RecallScope) -> Recalled | None:
        """The lesson `scope` admits that is most similar to `vector` (by similarity alone)."""
        found = self.rows.search(vector, WIDEN, cast("Where", scope.where()))
        return next((h for h in found if scope.admits(h.reflection)), None)

    def _task_nearest(
        self, cache: TaskCache, vector: Sequence[float], scope: RecallScope, n: int
    ) -> list[Recalled]:
        with cache.lock:  # held from reading the task's lessons to ranking them: no write between
            if not cache.has(scope.task_id):
                with self.rows.rows() as collection:
                    res = collection.get(
                        where={"task_id": scope.task_id},
                        include=["embeddings", "documents", "metadatas"],
                    )
                vectors = res["embeddings"] if res["embeddings"] is not None else []
                cache.fill(scope.task_id, from_columns(res), vectors)
            return cache.nearest(scope.task_id, vector, scope, n)
