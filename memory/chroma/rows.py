"""Reflections as Chroma rows and back: the id is the reflection id, the document its text, and
the metadata every provenance field, so a store can be audited without the run that wrote it.
And `Rows`, the rows of one store: what ChromaMemory and its parts (recall, changes with
history, credit, merges) share, read and written under the store's lock.

    >>> from reflexion.core.lesson_records import REFLECTION, Reflection
    >>> r = Reflection("r1", "check the sign", "run", "reflexion", "quad", "t1", 0, 2, -1.5, 1e9)
    >>> to_metadata(r)["score"], to_metadata(r)["score_exact"]
    (-1.5, '-1.5')
    >>> from_columns({"ids": ["r1"], "documents": [r.text], "metadatas": [to_metadata(r)]}) == [r]
    True
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.chroma.connect import one_line, shared_cache
from memory.chroma.recent import Recent
from reflexion.core.curation import Change
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.lesson_records import REFLECTION, Recalled, Reflection, is_own

if TYPE_CHECKING:
    from memory.chroma.tasks import TaskCache

Metadata = dict[str, str | int | float | bool]
META = "meta."  # prefix of the columns that hold a lesson's metadata (Reflection.metadata)

_INT64 = range(-(2**63), 2**63)
_EXACT = "_exact"  # suffix of the metadata key holding a float's exact repr


def to_metadata(r: Reflection) -> Metadata:
    """Every provenance field of a reflection, as Chroma metadata (the text is the document).

    >>> sorted(to_metadata(Reflection("r", "t", "run", "s", "e", "t1", 0, 1, 0.5, 2.0)))[:3]
    ['created', 'created_exact', 'env']
    """
    for field, value in (("seed", r.seed), ("episode", r.episode)):
        # Chroma silently stores an int outside int64 as a float, which would not round-trip.
        if int(value) not in _INT64:
            msg = f"reflection {r.id}: {field} {value} does not fit in a 64-bit integer"
            raise UsageError(msg)
    meta: Metadata = {
        "run_id": r.run_id,
        "strategy": r.strategy,
        "env": r.env,
        "task_id": r.task_id,
        "seed": int(r.seed),
        "episode": int(r.episode),
    }
    if r.flag:
        meta["flag"] = r.flag
    if not is_own(r.kind):  # a reflection's row has no kind: the default (see RecallScope)
        meta["kind"] = r.kind
    if r.votes:
        meta["votes"] = int(r.votes)
    if r.key:
        meta["key"] = r.key
    if r.edited_on:  # a JSON list: Chroma metadata holds scalars
        meta["edited_on"] = json.dumps(list(r.edited_on))
    if r.status:
        meta["status"] = r.status
    if r.evidence:  # JSON, as edited_on
        meta["evidence"] = json.dumps(r.evidence, sort_keys=True)
    for key, given in r.metadata.items():  # scalar columns of their own, so `where` filters them
        meta[META + key] = given
    for field, number in (("score", float(r.score)), ("created", float(r.created))):
        # subtle: Chroma 1.5.9 returns about a third of floats one ulp off and silently drops
        # inf/nan. The number stays for filtering; the exact value, read back, is its repr.
        if math.isfinite(number):
            meta[field] = number
        meta[field + _EXACT] = repr(number)
    return meta


def from_columns(res: Mapping[str, Any]) -> list[Reflection]:
    """Reflections from Chroma's columnar result (`ids`, `documents`, `metadatas`).

    >>> from_columns({"ids": [], "documents": [], "metadatas": []})
    []
    """
    documents = res.get("documents") or [None] * len(res["ids"])
    metadatas = res.get("metadatas") or [{}] * len(res["ids"])
    return [
        Reflection(
            id=rid,
            text=doc or "",
            run_id=str(meta["run_id"]),
            strategy=str(meta["strategy"]),
            env=str(meta["env"]),
            task_id=str(meta["task_id"]),
            seed=int(meta["seed"]),
            episode=int(meta["episode"]),
            score=_number(meta, "score"),
            created=_number(meta, "created"),
            flag=str(meta.get("flag", "")),
            kind=str(meta.get("kind", REFLECTION)),
            votes=int(meta.get("votes", 0)),
            key=str(meta.get("key", "")),
            edited_on=tuple(json.loads(str(meta.get("edited_on", "[]")))),
            metadata={k[len(META) :]: v for k, v in meta.items() if k.startswith(META)},
            status=str(meta.get("status", "")),
            evidence=json.loads(str(meta.get("evidence", "{}"))),
        )
        for rid, doc, meta in zip(res["ids"], documents, metadatas, strict=True)
    ]


def _number(meta: Mapping[str, Any], field: str) -> float:
    exact = meta.get(field + _EXACT)
    return float(exact) if exact is not None else float(meta[field])


VERSIONS = "reflection_versions"  # the change log's collection, beside the lessons
READ_PAGE = 5_000  # rows per `get` when reading a whole store
Embed = Callable[[list[str]], list[list[float]]]


class Versions:
    """The change log of one store (its own collection, beside the reflections)."""

    def __init__(self, client: Any) -> None:
        import chromadb.errors

        self._client = client
        try:  # made by the first change: reading a store's history must not write to it
            self._collection: Any = client.get_collection(VERSIONS, embedding_function=None)
        except chromadb.errors.NotFoundError:
            self._collection = None

    def record(
        self,
        rid: str,
        action: str,
        why: str,
        before: Reflection | None,
        extras: dict[str, Any] | None = None,
    ) -> Change:
        """Log a change; `extras` are the row's counts and merged provenances before it
        (memory.chroma.credit), so that reverting the change brings them back too."""
        if self._collection is None:
            # no vectors to search: each entry carries a 1-d placeholder, as Chroma wants one
            self._collection = self._client.get_or_create_collection(
                VERSIONS, embedding_function=None
            )
        number = len(self.of(rid)) + 1
        version = Change(rid, number, action, time.time(), why, before)
        meta = {"reflection_id": rid, "number": number, "action": action, "when": version.when}
        meta["extras"] = json.dumps(extras or {})
        self._collection.add(
            ids=[f"{rid}#{number:05d}"],
            embeddings=[[0.0]],
            documents=[json.dumps(before.to_dict() if before else None)],
            metadatas=[meta | {"why": why}],
        )
        return version

    def of(self, rid: str) -> list[Change]:
        """The changes to `rid`, oldest first."""
        return [change for change, _ in self.with_extras(rid)]

    def ids(self) -> list[str]:
        """Every lesson id with a change logged, sorted."""
        if self._collection is None:
            return []
        res = self._collection.get(include=["metadatas"])
        return sorted({str(meta["reflection_id"]) for meta in res["metadatas"] or []})

    def with_extras(self, rid: str) -> list[tuple[Change, dict[str, Any]]]:
        """The changes to `rid`, oldest first, each with the row's extras before it."""
        if self._collection is None:
            return []
        res = self._collection.get(where={"reflection_id": rid}, include=["documents", "metadatas"])
        pairs = zip(res["documents"] or [], res["metadatas"] or [], strict=True)
        out = [
            (_change(rid, doc, meta), json.loads(str(meta.get("extras", "{}"))))
            for doc, meta in pairs
        ]
        return sorted(out, key=lambda pair: pair[0].number)


class Rows:
    """The rows of one Chroma store: its collection (`collection`, for a call under `rows()`),
    its change log (`changelog()`) and the writes that keep the task cache in step
    (memory.chroma.recall). Safe to share between threads: every Chroma call holds one lock, and
    turns the store's own errors into a one-line StoreError. `folder` and `name` say whose task
    cache a write keeps in step (an embedded folder's collection); `describe` names the store
    in the error of a call after `close`.

        >>> with rows.rows() as collection:  # doctest: +SKIP
        ...     collection.count()
        3
    """

    def __init__(
        self,
        collection: Any,
        client: Any,
        *,
        location: str,
        errors: tuple[type[Exception], ...],
        embed: Embed,
        describe: Callable[[], str],
        folder: Path | None = None,
        name: str = "",
    ) -> None:
        self.collection, self.location, self.describe = collection, location, describe
        self._client, self._errors, self._embed = client, errors, embed
        self._folder, self._collection_name = folder, name
        self._recent = Recent() if folder is None else None  # a server's: see memory.chroma.recent
        self._batch = client.get_max_batch_size()
        self._lock = threading.Lock()
        self._closed = False
        self._log: Versions | None = None  # the change log, opened on first use

    def close(self, release: Callable[[], None]) -> None:
        """No call after this one; `release` lets go of the client, with the lock held."""
        with self._lock:
            self._closed = True
            release()

    @contextlib.contextmanager
    def calling(self) -> Iterator[None]:
        """A call to Chroma: the lock held, refused once closed, its errors one line."""
        with self._lock:
            if self._closed:
                msg = f"{self.describe()} is closed"
                raise ValueError(msg)
            try:
                yield
            except self._errors as e:
                msg = f"Chroma store at {self.location}: {one_line(e)}"
                raise StoreError(msg) from e

    @contextlib.contextmanager
    def rows(self) -> Iterator[Any]:
        """The Chroma collection itself, with the lock held (memory.chroma.credit)."""
        with self.calling():
            yield self.collection

    @contextlib.contextmanager
    def changelog(self) -> Iterator[Versions]:
        """The store's change log (memory.chroma.history), with the lock held."""
        with self.calling():
            if self._log is None:
                self._log = Versions(self._client)
            yield self._log

    @contextlib.contextmanager
    def writing(self) -> Iterator[TaskCache | None]:
        """A write to the store, with the task cache of its writers (if any) held, to be kept
        in step; a write that fails part way empties the cache."""
        cache = shared_cache(self._folder, self._collection_name)
        if cache is None:
            yield None
            return
        with cache.lock:
            try:
                yield cache
            except BaseException:
                cache.clear()
                raise

    def count(self) -> int:
        with self.calling():
            return int(self.collection.count())

    def get(self, reflection_id: str) -> Reflection | None:
        """The reflection with this id, or None."""
        with self.calling():
            res = self.collection.get(ids=[reflection_id], include=["documents", "metadatas"])
        found = from_columns(res)
        return found[0] if found else None

    def reflections(self, where: Any) -> list[Reflection]:
        """Every stored reflection `where` admits (None: all), oldest first (ties: by id)."""
        found: list[Reflection] = []
        with self.calling():
            # in pages: one `get` of 100k rows fails in Chroma with "too many SQL variables"
            while True:
                page = self.collection.get(
                    where=where,
                    include=["documents", "metadatas"],
                    limit=READ_PAGE,
                    offset=len(found),
                )
                found += from_columns(page)
                if len(page["ids"]) < READ_PAGE:
                    break
        return sorted(found, key=lambda r: (r.created, r.id))

    def add(self, reflections: Sequence[Reflection]) -> None:
        """Store reflections, embedded by the store's model (see ChromaMemory.add)."""
        # Chroma rejects a batch that repeats an id; the last one wins, as with a second add.
        unique = list({r.id: r for r in reflections}.values())
        if unique:
            self.add_embedded(unique, self._embed([r.key or r.text for r in unique]))

    def add_embedded(self, reflections: Sequence[Reflection], vectors: Sequence[Any]) -> None:
        """Store reflections (ids unique) with their vectors, an id already stored overwritten."""
        unique, metadatas = list(reflections), [to_metadata(r) for r in reflections]
        with self.writing() as cache, self.calling():
            for i in range(0, len(unique), self._batch):
                chunk = slice(i, i + self._batch)
                self.collection.upsert(
                    ids=[r.id for r in unique[chunk]],
                    embeddings=list(vectors[chunk]),
                    documents=[r.text for r in unique[chunk]],
                    metadatas=metadatas[chunk],
                )
            if cache is not None:
                cache.put(_as_read(unique, metadatas), vectors)
            if self._recent is not None:
                self._recent.put(_as_read(unique, metadatas), vectors)

    def delete(self, ids: Sequence[str]) -> int:
        """Remove these reflections; returns how many existed."""
        unique = list(dict.fromkeys(ids))
        if not unique:
            return 0  # subtle: Chroma refuses an empty id list rather than deleting nothing
        with self.writing() as cache, self.calling():
            existing = self.collection.get(ids=unique, include=[])["ids"]
            if existing:
                self.collection.delete(ids=existing)
            if cache is not None:
                cache.drop(existing)
            if self._recent is not None:
                self._recent.drop(unique)
        return len(existing)

    def search(self, vector: Sequence[float], k: int, where: Any) -> list[Recalled]:
        """Up to k rows `where` admits (None: any), nearest to `vector` first."""
        with self.calling():
            # Some Chroma versions raise when n_results exceeds the collection size: cap it.
            n = min(k, self.collection.count())
            res = None
            if n > 0:
                res = self.collection.query(
                    query_embeddings=[vector],
                    n_results=n,
                    where=where,
                    include=["documents", "metadatas", "distances"],
                )
        found = [] if res is None else _nearest(res)
        if where is None and self._recent is not None:
            return self._recent.merged(found, vector, k)  # a row the server left out for now
        return found


def _nearest(res: Mapping[str, Any]) -> list[Recalled]:
    # A query result holds one batch per query embedding; we sent one.
    first = {key: column[0] for key, column in res.items() if isinstance(column, list)}
    pairs = zip(from_columns(first), first["distances"], strict=True)
    return [Recalled(r, 1.0 - float(distance)) for r, distance in pairs]


def _change(rid: str, doc: str | None, meta: dict[str, Any]) -> Change:
    before = json.loads(doc) if doc else None
    return Change(
        rid,
        int(meta["number"]),
        str(meta["action"]),
        float(meta["when"]),
        str(meta.get("why", "")),
        Reflection.from_dict(before) if before else None,
    )


def _as_read(reflections: Sequence[Reflection], metadatas: list[Metadata]) -> list[Reflection]:
    # What the store gives back for these rows, so that a cached lesson equals a read one.
    ids, texts = [r.id for r in reflections], [r.text for r in reflections]
    return from_columns({"ids": ids, "documents": texts, "metadatas": metadatas})
