"""A change with history, written once for a Chroma store: a person's (`reflexion memory forget|
edit|revert|import`) and a run's own (a rule's new votes or text, a new cheatsheet, a rule
dropped). Each change first records, in the store's change log (a second collection beside the
lessons), what the lesson was, when and why, and its credit then, so that reverting the change
brings both back. An edit starts the credit afresh. The history of a lesson is its changes in
order; reverting undoes the latest one (the undoing is itself a change).

    >>> memory.forget(["3f9a0c1d2e4b5a69"], why="misleading")          # doctest: +SKIP
    1
    >>> [v.action for v in memory.history("3f9a0c1d2e4b5a69")]          # doctest: +SKIP
    ['forget']
    >>> memory.revert("3f9a0c1d2e4b5a69", why="it was right").text     # doctest: +SKIP
    'Check the sign of the step.'
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from memory.chroma.credit import COUNTS, EXTRAS, Rows
from reflexion.core.curation import EDIT, FORGET, IMPORT, REVERT, Change, lesson_text, restored
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Reflection

VERSIONS = "reflection_versions"


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


def extras_of(memory: Rows, lesson_id: str) -> dict[str, Any]:
    """The lesson's counts, audited episodes and merged provenances (kept with a change,
    so that reverting it brings them back)."""
    with memory.rows() as rows:
        found = rows.get(ids=[lesson_id], include=["metadatas"])
    meta = (found["metadatas"] or [{}])[0] or {}
    return {k: meta[k] for k in EXTRAS if k in meta}


def set_extras(memory: Rows, lesson_id: str, extras: Mapping[str, Any]) -> None:
    """Give a stored lesson these extras; counts not in `extras` start afresh (at 0)."""
    fresh: dict[str, Any] = {k: 0 for k in COUNTS} | {"audited": "[]", "merged": "[]"}
    fresh["credited"] = "[]"
    with memory.rows() as rows:
        if rows.get(ids=[lesson_id], include=[])["ids"]:
            rows.update(ids=[lesson_id], metadatas=[fresh | dict(extras)])


class _Store(Protocol):
    """What a change needs of the store (ChromaMemory)."""

    location: str
    _history: Versions | None
    _client: Any

    def _calling(self) -> AbstractContextManager[None]: ...

    def changelog(self) -> AbstractContextManager[Versions]: ...

    def rows(self) -> AbstractContextManager[Any]: ...

    def get(self, reflection_id: str) -> Reflection | None: ...

    def add(self, reflections: Sequence[Reflection]) -> None: ...

    def delete(self, ids: Sequence[str]) -> int: ...

    def _change(
        self,
        action: str,
        why: str,
        after: Sequence[tuple[str, Reflection | None]],
        credit: bool = True,
    ) -> None: ...


class History:
    """A Chroma store's changes with history (mixed into ChromaMemory)."""

    _history: Versions | None  # the change log, opened on first use

    @contextlib.contextmanager
    def changelog(self: _Store) -> Iterator[Versions]:
        """The store's change log, with the store's lock held."""
        with self._calling():
            log = self._history
            if log is None:
                log = self._history = Versions(self._client)
            yield log

    def _change(
        self: _Store,
        action: str,
        why: str,
        after: Sequence[tuple[str, Reflection | None]],
        credit: bool = True,
    ) -> None:
        """The one change with history, a person's or the run's: for each (id, lesson), what is
        stored under that id now goes into the change log, with its credit where `credit` (a
        run's revision logs none: a revert of it starts the credit afresh); then the new lesson
        takes its place (None: it is removed), its credit kept unless the caller sets it."""
        before = {rid: self.get(rid) for rid, _ in after}
        kept = {rid: extras_of(self, rid) for rid, r in before.items() if credit and r is not None}
        with self.changelog() as log:
            for rid, _ in after:
                log.record(rid, action, why, before[rid], kept.get(rid))
        gone = [rid for rid, new in after if new is None and before[rid] is not None]
        stored = [new for _, new in after if new is not None]
        if gone:
            self.delete(gone)
        if stored:
            self.add(stored)

    def forget(self: _Store, ids: Sequence[str], why: str) -> int:
        """Remove these reflections, keeping each (and its credit) in its history; returns how
        many existed."""
        found = [rid for rid in dict.fromkeys(ids) if self.get(rid) is not None]
        self._change(FORGET, why, [(rid, None) for rid in found])
        return len(found)

    def edit(self: _Store, reflection_id: str, text: str, why: str) -> Reflection:
        """New text for a reflection (embedded again), its counts started afresh; the old text
        and counts go into its history."""
        old = self.get(reflection_id)
        if old is None:
            msg = f"no reflection with id {reflection_id!r} in {self.location}"
            raise UsageError(msg)
        merged = {k: v for k, v in extras_of(self, old.id).items() if k == "merged"}
        new = dataclasses.replace(old, text=lesson_text(text))
        self._change(EDIT, why, [(old.id, new)])
        set_extras(self, new.id, merged)
        return new

    def revert(
        self: _Store, reflection_id: str, why: str = "revert", to: int | None = None
    ) -> Reflection | None:
        """Undo the latest change to a reflection, or bring back what it was before change `to`
        (its credit then too); returns the reflection as it is now, or None when it was not
        stored before that change (its import)."""
        with self.changelog() as log:
            changes = log.with_extras(reflection_id)
        if not changes:
            msg = f"reflection {reflection_id!r} has no change to revert in {self.location}"
            raise UsageError(msg)
        undone = restored([change for change, _ in changes], to)
        extras = changes[undone.number - 1][1]
        self._change(REVERT, why, [(reflection_id, undone.before)])
        if undone.before is not None:
            set_extras(self, reflection_id, extras)
        return undone.before

    def bring_in(self: _Store, reflections: Sequence[Reflection], why: str) -> int:
        """Add reflections from elsewhere (an export), recording what each id held before."""
        self._change(IMPORT, why, [(r.id, r) for r in reflections])
        return len(reflections)

    def history(self: _Store, reflection_id: str) -> list[Change]:
        """Every change to this lesson, oldest first."""
        with self.changelog() as log:
            return log.of(reflection_id)

    def changed_ids(self: _Store) -> list[str]:
        """Every lesson id with a change in the log, stored now or forgotten."""
        with self.changelog() as log:
            return log.ids()

    def revise(self: _Store, reflection: Reflection, why: str) -> None:
        """Store `reflection` in place of the lesson with its id (a rule's new text or votes, a
        new cheatsheet), the lesson it replaces kept in its history (Revising)."""
        action = EDIT if self.get(reflection.id) is not None else IMPORT  # new: it came in
        self._change(action, why, [(reflection.id, reflection)], credit=False)

    def retire(self: _Store, reflection_id: str, why: str) -> None:
        """Remove a lesson (a rule voted down to 0), kept in its history (Revising)."""
        if self.get(reflection_id) is not None:
            self._change(FORGET, why, [(reflection_id, None)], credit=False)


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
