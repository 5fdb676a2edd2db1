"""The `chroma` memory backend (the default): reflections in a Chroma collection, embedded on
disk (the run folder's `OUT/memory`, or a folder shared across runs, `--memory DIR`) or on a
`chroma run` server (`--chroma-url`). One class serves the run's contract (recall, add) and the
people's (list, forget, edit, revert, audit). It is made of parts, each over the store's rows
(memory.chroma.rows.Rows, the one handle they share): its recall (memory.chroma.recall),
changes with history (memory.chroma.history), credit (memory.chroma.credit) and merged
near-duplicates (memory.chroma.merging).

We embed texts ourselves and always hand Chroma the vectors, and open collections with
`embedding_function=None`: Chroma's default embedding function downloads an ONNX model, and a
collection that has none cannot silently fall back to it. The model that made the vectors is
recorded in the collection metadata, and a store made with another model is refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast

from memory.backend import Access, Backend, StoreSettings
from memory.chroma.connect import (
    SQLITE_FILE,
    CacheHold,
    Retrying,
    StoreLock,
    Unresolved,
    check_model,
    connect,
    one_line,
    open_collection,
    release,
    store_path,
    stored_model,
    where_missing,
)
from memory.chroma.credit import Credits
from memory.chroma.filters import Filters, where_of
from memory.chroma.history import History
from memory.chroma.merging import Merges
from memory.chroma.recall import Filtered, Recall
from memory.chroma.rows import Rows
from memory.chroma.tasks import TaskCache
from memory.embedders import embedder_for, warm_up
from memory.ranking import Ranking
from reflexion.core.curation import EVERY, VERBS, Change, Chosen, Credit
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection
from reflexion.core.protocols import Embedder

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

COLLECTION = "reflections"


class ChromaMemory:
    """A store of lessons in a Chroma collection, recalled by cosine similarity (`1 - distance`),
    then the ranking (memory.ranking); every verb of the people's contract. Safe to share
    between threads: every Chroma call holds a lock (embedding does not).

        >>> m = ChromaMemory("runs/memory", embedder=HashEmbedder())  # doctest: +SKIP
        >>> shared = ChromaMemory(url="http://10.0.0.5:8000", embedder=e)  # doctest: +SKIP
    """

    kind = "chroma"
    can = VERBS

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        url: str | None = None,
        embedder: Embedder,
        collection: str = COLLECTION,
        create: bool = True,
        ranking: Ranking | None = None,
        hold: bool = False,
    ) -> None:
        if (path is None) == (url is None):
            msg = "ChromaMemory needs exactly one of path (an embedded store) or url (a server)"
            raise UsageError(msg)
        try:
            import chromadb
            import chromadb.errors
            import httpx
        except ImportError as e:
            msg = "ChromaMemory needs chromadb: pip install 'chromadb>=1.0'"
            raise ImportError(msg) from e
        self.path = None if path is None else Path(path)
        self.url = url
        self.embedder = embedder
        self.collection = collection
        self.ranking = ranking if ranking is not None else Ranking()  # see memory.ranking
        self.location = str(self.path) if self.path is not None else str(url)
        self.label = _label(self.location, embedder)  # what and where, for listings
        self._writer_lock: StoreLock | None = None
        self._tasks: CacheHold | None = None  # task scope's cache: only while we alone write
        with self._opening():
            if (create or hold) and self.path is not None:  # held against other processes
                self._writer_lock = StoreLock(self.path)
            if create and self.path is not None:
                self._tasks = CacheHold(self.path, collection, TaskCache)
            self._client = connect(chromadb, self.path, url, create)
            opened = open_collection(self._client, collection, embedder, create)
            # a server's internal error is tried again (Retrying passes every call through)
            self._collection = cast("Collection", Retrying(opened))
            self._compose((chromadb.errors.ChromaError, httpx.HTTPError))
            if not isinstance(embedder, Unresolved):
                check_model(self._collection, embedder, self.location)

    def _compose(self, errors: tuple[type[Exception], ...]) -> None:
        # Errors of the store (not our bugs) that every call turns into a one-line StoreError.
        self._rows = Rows(
            self._collection,
            self._client,
            location=self.location,
            errors=errors,
            embed=self._embed,
            describe=self.__repr__,
            folder=self.path,
            name=self.collection,
        )
        self._recall, self._history = Recall(self._rows), History(self._rows)
        self._credits, self._merges = Credits(self._rows), Merges(self._rows)

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        url: str | None = None,
        collection: str = COLLECTION,
        ranking: Ranking | None = None,
        hold: bool = False,
    ) -> ChromaMemory:
        """An EXISTING store, with the embedder it was made with (read from its metadata); for
        inspection. The sentence-transformers model loads only if you search. With `hold`, held
        against other processes until closed (a run on the same folder waits its turn).

            >>> ChromaMemory.open("runs/quad-20261122/memory").info()["count"]  # doctest: +SKIP
            24
        """
        memory = cls(
            path, url=url, embedder=Unresolved(), collection=collection, create=False, hold=hold
        )
        with memory._opening():
            memory.embedder = embedder_for(stored_model(memory._collection, memory.location))
        memory.ranking = ranking if ranking is not None else memory.ranking
        memory.label = _label(memory.location, memory.embedder)
        return memory

    @classmethod
    def opened(cls, where: StoreSettings, access: Access) -> ChromaMemory | None:
        """The store at `where` (see memory.registry.open_store). For a run, made where there
        is none, with the run's embedder, loaded now (not in the first trial's timing), once a
        process (memory.embedders.embedder_for);
        else an existing one, with the embedder it was made with, ranked as the run ranked it."""
        path = store_path(where)
        exists = path is None or (path / SQLITE_FILE).exists()
        if access is Access.RUN or (access is Access.CREATE and not exists):
            embedder = embedder_for(where.embedder)
            memory = cls(
                path,
                url=where.chroma_url,
                embedder=embedder,
                collection=where.collection,
                ranking=where.ranking,
            )
            if access is Access.RUN:
                warm_up(embedder)
            return memory
        if not exists:
            return None
        url, hold = where.chroma_url, access is not Access.READ
        return cls.open(
            path, url=url, collection=where.collection, ranking=where.ranking, hold=hold
        )

    def close(self) -> None:
        """Let go of the store: Chroma keeps one shared client per folder in a process, and the
        last close releases its sqlite file. Later calls on this object fail.

            >>> with ChromaMemory("runs/memory", embedder=HashEmbedder()) as m:  # doctest: +SKIP
            ...     m.add(lessons)
        """
        self._rows.close(self._release)

    def _release(self) -> None:
        release(self._client)
        self._let_go()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = f"url={self.url!r}" if self.url is not None else repr(self.location)
        model = self.embedder.name
        return f"ChromaMemory({where}, collection={self.collection!r}, model={model!r})"

    # -- the Memory protocol -------------------------------------------------------------------

    def add(self, reflections: Sequence[Reflection]) -> None:
        """Store reflections; an id already stored is overwritten (upsert), so adding is
        idempotent. Each is found by its `key` where it has one (its task's question), else by
        its text.

            >>> m.add([reflection])  # doctest: +SKIP
        """
        self._rows.add(reflections)

    def add_embedded(self, reflections: Sequence[Reflection], vectors: Sequence[Any]) -> None:
        """Store reflections with vectors made elsewhere, one per reflection (ids unique), by
        this store's embedding model (scripts/benchmark_recall.py fills a store this way).

            >>> m.add_embedded(lessons, model.embed([r.text for r in lessons]))  # doctest: +SKIP
        """
        self._rows.add_embedded(reflections, vectors)

    def recall(
        self, text: str, scope: RecallScope, k: int, filters: Filters | None = None
    ) -> list[Recalled]:
        """Up to k reflections that `scope` admits (and, with `filters`, that pass them), best
        first by the memory's Ranking: similarity to `text`, the asking task's own lessons,
        recent ones. In task scope, on a store this process alone writes, from the task's
        lessons in memory (the task cache, memory.chroma.recall)."""
        if filters:
            scope = cast("RecallScope", Filtered(scope, filters))  # the same two methods
        tasks = self._tasks  # subtle: read once, a close may set it to None meanwhile
        cache = tasks.cache if tasks is not None else None
        n = self.ranking.candidates(k)
        hits = self._recall.candidates(self._embed([text])[0], scope, n, cache)
        return self.ranking.rank(hits, scope.task_id, k)

    def recall_by_query(self, text: str, scope: RecallScope, k: int) -> list[Recalled]:
        """`recall` as Chroma's nearest-neighbour query answers it, in any scope: the path of
        global scope, and of task scope before the task cache (which is checked against it, and
        measured against it in scripts/benchmark_recall.py).

            >>> [h.reflection.id for h in m.recall_by_query("off by one", s, 2)]  # doctest: +SKIP
            ['3f9a0c1d2e4b5a69', '41c0e2d9a7b3f815']
        """
        n = self.ranking.candidates(k)
        hits = self._recall.candidates(self._embed([text])[0], scope, n, cache=None)
        return self.ranking.rank(hits, scope.task_id, k)

    def nearest(self, text: str, scope: RecallScope) -> Recalled | None:
        """The lesson `scope` admits that is most similar to `text` (by similarity alone)."""
        return self._recall.nearest(self._embed([text])[0], scope)

    def search(self, text: str, k: int, filters: Filters | None = None) -> list[Recalled]:
        """Up to k reflections of any provenance, most similar first (for inspection); with
        `filters` (memory.chroma.rows.conditions), only those that pass them.

        >>> [x.reflection.task_id for x in m.search("off by one", k=2)]  # doctest: +SKIP
        ['HumanEval/3', 'HumanEval/41']
        """
        where = where_of(filters)
        return self._rows.search(self._embed([text])[0], k, where) if k > 0 else []

    def get(self, reflection_id: str) -> Reflection | None:
        """The reflection with this id, or None."""
        return self._rows.get(reflection_id)

    def reflections(self, filters: Filters | None = None) -> list[Reflection]:
        """Every stored reflection that passes `filters` (None: all), oldest first (ties: by id)."""
        return self._rows.reflections(where_of(filters) if filters else None)

    def delete(self, ids: Sequence[str]) -> int:
        """Remove these reflections; returns how many existed."""
        return self._rows.delete(ids)

    def revise(self, reflection: Reflection, why: str) -> None:
        """Store `reflection` in place of the lesson with its id (a rule's new text or votes, a
        new cheatsheet), the lesson it replaces kept in its history (Revising)."""
        self._history.revise(reflection, why)

    def retire(self, reflection_id: str, why: str) -> None:
        """Remove a lesson (a rule voted down to 0), kept in its history (Revising)."""
        self._history.retire(reflection_id, why)

    def credit(self, ids: Sequence[str], outcome: str | None, episode: str | None = None) -> None:
        """One more recall of each of `ids`, and one more `outcome` (memory.chroma.credit)."""
        self._credits.credit(ids, outcome, episode)

    def merge(self, into: str, reflection: Reflection) -> None:
        """Keep `reflection`, a near-copy, as a provenance of `into` (memory.chroma.merging)."""
        self._merges.merge(into, reflection)

    # -- the people's contract (reflexion.core.curation.Curated) -------------------------------

    def lessons(self, chosen: Chosen = EVERY) -> list[Reflection]:
        """Every stored lesson `chosen` admits, oldest first."""
        return [r for r in self.reflections() if chosen.admits(r)]

    def ranked(self, text: str, scope: RecallScope, at: float) -> list[Recalled]:
        """By the run's ranking, over every lesson (as a recall ranks its candidates)."""
        every = self.search(text, k=max(len(self.reflections()), 1))
        admitted = [h for h in every if h.reflection.created <= at and scope.admits(h.reflection)]
        return self.ranking.rank(admitted, scope.task_id, len(admitted))

    def forget(self, ids: Sequence[str], why: str) -> int:
        """Remove these lessons, each kept (with its credit) in its history; how many existed.

        >>> m.forget(["3f9a0c1d2e4b5a69"], why="misleading")  # doctest: +SKIP
        1
        """
        return self._history.forget(ids, why)

    def edit(self, reflection_id: str, text: str, why: str) -> Reflection:
        """New text for a lesson, its counts started afresh (memory.chroma.history)."""
        return self._history.edit(reflection_id, text, why)

    def revert(
        self, reflection_id: str, why: str = "revert", to: int | None = None
    ) -> Reflection | None:
        """Undo the latest change to a lesson, or every change from number `to` on."""
        return self._history.revert(reflection_id, why, to)

    def bring_in(self, reflections: Sequence[Reflection], why: str) -> int:
        """Add lessons from elsewhere (an export), recording what each id held before."""
        return self._history.bring_in(reflections, why)

    def history(self, reflection_id: str) -> list[Change]:
        """Every change to this lesson, oldest first."""
        return self._history.history(reflection_id)

    def changed_ids(self) -> list[str]:
        """Every lesson id with a change in the log, stored now or forgotten."""
        return self._history.changed_ids()

    def credits(self) -> dict[str, Credit]:
        """Every lesson's credit, by id."""
        return self._credits.credits()

    def count_audit(self, reflection_id: str, outcome: str, episode: str) -> bool:
        """One more audited `episode` of this lesson (False: that episode was counted)."""
        return self._credits.count_audit(reflection_id, outcome, episode)

    def merged_from(self, reflection_id: str) -> list[dict[str, Any]]:
        """The provenances merged into a stored lesson, oldest first."""
        return self._merges.merged_from(reflection_id)

    def info(self) -> dict[str, Any]:
        """Where the store is and what it holds, for the inspection CLI."""
        return {
            "location": self.location,
            "path": None if self.path is None else str(self.path),
            "url": self.url,
            "collection": self.collection,
            "embedding_model": self.embedder.name,
            "embedding_dim": self.embedder.dim,
            "count": self._rows.count(),
        }

    @contextlib.contextmanager
    def _opening(self) -> Iterator[None]:
        try:
            yield
        except Exception as e:
            if hasattr(self, "_client"):
                release(self._client)  # a refused store must not stay held by this process
            self._let_go()
            if isinstance(e, StoreError | UsageError):
                raise
            # Anything Chroma raises while opening means "cannot open", not a bug of ours.
            msg = f"cannot open Chroma store at {self.location}: {one_line(e)}"
            raise StoreError(msg) from e

    def _let_go(self) -> None:
        if self._tasks is not None:
            self._tasks.close()
            self._tasks = None
        if self._writer_lock is not None:
            self._writer_lock.close()
            self._writer_lock = None

    def _embed(self, texts: list[str]) -> list[list[float]]:
        vectors = self.embedder.embed(texts)
        if len(vectors) != len(texts) or any(len(v) != self.embedder.dim for v in vectors):
            msg = f"embedder {self.embedder.name} returned vectors of the wrong number or size"
            raise ValueError(msg)
        return vectors


def _label(location: str, embedder: Embedder) -> str:
    return f"{location} (embedding model {embedder.name}, dim {embedder.dim})"


CHROMA = Backend(
    "chroma",
    "a Chroma vector store, ranked by similarity, the task's own lessons and recency (--rank)",
    open=ChromaMemory.opened,
    shared=True,
    where=where_missing,
)
