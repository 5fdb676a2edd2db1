"""The `chroma` memory backend (the default): reflections in a Chroma collection, embedded on
disk (the run folder's `OUT/memory`, or a folder shared across runs, `--memory DIR`) or on a
`chroma run` server (`--chroma-url`). One class serves the run's contract (recall, add) and the
people's (list, forget, edit, revert, audit), as chroma's one client serves its ClientAPI and
AdminAPI; its recall (memory.chroma.recall), changes with history (memory.chroma.history),
credit (memory.chroma.credit) and merged near-duplicates (memory.chroma.merging) are mixed in.

We embed texts ourselves and always hand Chroma the vectors, and open collections with
`embedding_function=None`: Chroma's default embedding function downloads an ONNX model, and a
collection that has none cannot silently fall back to it. The model that made the vectors is
recorded in the collection metadata, and a store made with another model is refused.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast

from memory.backend import Access, Backend, ReadOnly, StoreSettings
from memory.chroma.connect import (
    SQLITE_FILE,
    Retrying,
    StoreLock,
    Unresolved,
    check_model,
    connect,
    one_line,
    open_collection,
    release,
    stored_model,
)
from memory.chroma.credit import Credited
from memory.chroma.history import History, Versions
from memory.chroma.merging import Merges
from memory.chroma.recall import CacheHold, Recalling, TaskCache, shared_cache
from memory.chroma.rows import Filters, from_columns, to_metadata, where_of
from memory.embedders import embedder_for, warm_up
from memory.ranking import Ranking
from reflexion.core.curation import VERBS
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection
from reflexion.core.protocols import Embedder

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import Where

COLLECTION = "reflections"
READ_PAGE = 5_000  # rows per `get` when reading a whole store


class ChromaMemory(Recalling, History, Credited, Merges, ReadOnly):
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
        # Errors of the store (not our bugs) that every call turns into a one-line StoreError.
        self._errors: tuple[type[Exception], ...] = (chromadb.errors.ChromaError, httpx.HTTPError)
        self._lock = threading.Lock()
        self._closed = False
        self._history: Versions | None = None  # the change log, opened on first use
        self._writer_lock: StoreLock | None = None
        self._tasks: CacheHold | None = None  # task scope's cache: only while we alone write
        with self._opening():
            if (create or hold) and self.path is not None:  # held against other processes
                self._writer_lock = StoreLock(self.path)
            if create and self.path is not None:
                self._tasks = CacheHold(self.path, collection)
            self._client = connect(chromadb, self.path, url, create)
            opened = open_collection(self._client, collection, embedder, create)
            # a server's internal error is tried again (Retrying passes every call through)
            self._collection = cast("Collection", Retrying(opened))
            self._batch = self._client.get_max_batch_size()
            if not isinstance(embedder, Unresolved):
                check_model(self._collection, embedder, self.location)

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
        with self._lock:
            self._closed = True
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
        # Chroma rejects a batch that repeats an id; the last one wins, as with a second add.
        unique = list({r.id: r for r in reflections}.values())
        if unique:
            self.add_embedded(unique, self._embed([r.key or r.text for r in unique]))

    def add_embedded(self, reflections: Sequence[Reflection], vectors: Sequence[Any]) -> None:
        """Store reflections with vectors made elsewhere, one per reflection (ids unique), by
        this store's embedding model (scripts/benchmark_recall.py fills a store this way).

            >>> m.add_embedded(lessons, model.embed([r.text for r in lessons]))  # doctest: +SKIP
        """
        unique, metadatas = list(reflections), [to_metadata(r) for r in reflections]
        with self._writing() as cache, self._calling():
            for i in range(0, len(unique), self._batch):
                chunk = slice(i, i + self._batch)
                self._collection.upsert(
                    ids=[r.id for r in unique[chunk]],
                    embeddings=list(vectors[chunk]),
                    documents=[r.text for r in unique[chunk]],
                    metadatas=metadatas[chunk],  # type: ignore[arg-type]
                )
            if cache is not None:
                cache.put(unique, vectors)

    def search(self, text: str, k: int, filters: Filters | None = None) -> list[Recalled]:
        """Up to k reflections of any provenance, most similar first (for inspection); with
        `filters` (memory.chroma.rows.conditions), only those that pass them.

        >>> [x.reflection.task_id for x in m.search("off by one", k=2)]  # doctest: +SKIP
        ['HumanEval/3', 'HumanEval/41']
        """
        return self._query(text, k, cast("Where | None", where_of(filters)))

    def get(self, reflection_id: str) -> Reflection | None:
        """The reflection with this id, or None."""
        with self._calling():
            res = self._collection.get(ids=[reflection_id], include=["documents", "metadatas"])
        found = from_columns(res)
        return found[0] if found else None

    def reflections(self, filters: Filters | None = None) -> list[Reflection]:
        """Every stored reflection that passes `filters` (None: all), oldest first (ties: by id)."""
        found: list[Reflection] = []
        where = cast("Where | None", where_of(filters))
        with self._calling():
            # in pages: one `get` of 100k rows fails in Chroma with "too many SQL variables"
            while True:
                page = self._collection.get(
                    where=where,
                    include=["documents", "metadatas"],
                    limit=READ_PAGE,
                    offset=len(found),
                )
                found += from_columns(page)
                if len(page["ids"]) < READ_PAGE:
                    break
        return sorted(found, key=lambda r: (r.created, r.id))

    def delete(self, ids: Sequence[str]) -> int:
        """Remove these reflections; returns how many existed."""
        unique = list(dict.fromkeys(ids))
        if not unique:
            return 0  # subtle: Chroma refuses an empty id list rather than deleting nothing
        with self._writing() as cache, self._calling():
            existing = self._collection.get(ids=unique, include=[])["ids"]
            if existing:
                self._collection.delete(ids=existing)
            if cache is not None:
                cache.drop(existing)
        return len(existing)

    # -- the people's contract (Curated; changes, credit and merges are mixed in) ------------

    def ranked(self, text: str, scope: RecallScope, at: float) -> list[Recalled]:
        """By the run's ranking, over every lesson (as a recall ranks its candidates)."""
        every = self.search(text, k=max(len(self.reflections()), 1))
        admitted = [h for h in every if h.reflection.created <= at and scope.admits(h.reflection)]
        return self.ranking.rank(admitted, scope.task_id, len(admitted))

    @contextlib.contextmanager
    def rows(self) -> Iterator[Any]:
        """The Chroma collection itself, with the store's lock held (memory.chroma.credit)."""
        with self._calling():
            yield self._collection

    def info(self) -> dict[str, Any]:
        """Where the store is and what it holds, for the inspection CLI."""
        with self._calling():
            count = self._collection.count()
        return {
            "location": self.location,
            "path": None if self.path is None else str(self.path),
            "url": self.url,
            "collection": self.collection,
            "embedding_model": self.embedder.name,
            "embedding_dim": self.embedder.dim,
            "count": count,
        }

    # -- opening and calls ---------------------------------------------------------------------

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

    @contextlib.contextmanager
    def _calling(self) -> Iterator[None]:
        with self._lock:
            if self._closed:
                msg = f"{self!r} is closed"
                raise ValueError(msg)
            try:
                yield
            except self._errors as e:
                msg = f"Chroma store at {self.location}: {one_line(e)}"
                raise StoreError(msg) from e

    @contextlib.contextmanager
    def _writing(self) -> Iterator[TaskCache | None]:
        """A write to the store, with the task cache of its writers (if any) held, to be kept
        in step; a write that fails part way empties the cache."""
        cache = shared_cache(self.path, self.collection)
        if cache is None:
            yield None
            return
        with cache.lock:
            try:
                yield cache
            except BaseException:
                cache.clear()
                raise

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

    def _query(self, text: str, k: int, where: Where | None) -> list[Recalled]:
        return self._search(self._embed([text])[0], k, where) if k > 0 else []

    def _search(self, vector: Sequence[float], k: int, where: Where | None) -> list[Recalled]:
        with self._calling():
            # Some Chroma versions raise when n_results exceeds the collection size: cap it.
            n = min(k, self._collection.count())
            if n == 0:
                return []
            res = self._collection.query(
                query_embeddings=[vector],
                n_results=n,
                where=where,
                include=["documents", "metadatas", "distances"],
            )
        # A query result holds one batch per query embedding; we sent one.
        first = {key: column[0] for key, column in res.items() if isinstance(column, list)}
        pairs = zip(from_columns(first), first["distances"], strict=True)
        return [Recalled(r, 1.0 - float(distance)) for r, distance in pairs]


def _label(location: str, embedder: Embedder) -> str:
    return f"{location} (embedding model {embedder.name}, dim {embedder.dim})"


def store_path(where: StoreSettings) -> Path | None:
    """The store's folder (None: it is on a server)."""
    if where.chroma_url:
        return None
    return Path(where.memory) if where.memory else where.folder / "memory"


def _where(where: StoreSettings) -> str:
    path = store_path(where)
    return f"no {SQLITE_FILE} in {path}" if path is not None else f"{where.chroma_url}"


CHROMA = Backend(
    "chroma",
    "a Chroma vector store, ranked by similarity, the task's own lessons and recency (--rank)",
    open=ChromaMemory.opened,
    shared=True,
    where=_where,
)
