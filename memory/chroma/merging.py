"""Near-duplicate lessons (`--dedup`): a new reflection at least that similar to a stored one
the trial could recall is not stored again. The stored one keeps it as an extra provenance (a
JSON list in its metadata, `merged`), and the change goes into the store's change log.

    >>> memory.merged_from("3f9a0c1d2e4b5a69")[0]["episode"]          # doctest: +SKIP
    3
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any, Protocol

from memory.chroma.history import extras_of
from reflexion.core.lesson_records import Reflection

KEPT = ("id", "run_id", "strategy", "env", "task_id", "seed", "episode", "score", "created")


class _Store(Protocol):
    """What merging needs of a store (ChromaMemory)."""

    def get(self, reflection_id: str) -> Reflection | None: ...

    def add(self, reflections: list[Reflection]) -> None: ...

    def rows(self) -> AbstractContextManager[Any]: ...

    def changelog(self) -> AbstractContextManager[Any]: ...


class Merges:
    """A Chroma store's merged near-duplicates (mixed into ChromaMemory)."""

    def merge(self: _Store, into: str, reflection: Reflection) -> None:
        """Add `reflection`'s provenance (and its text) to the stored lesson `into`: a change of
        the lesson's row only, kept in the change log as the other changes are
        (memory.chroma.history)."""
        old = self.get(into)
        if old is None:  # gone meanwhile (forgotten): store the new one after all
            self.add([reflection])
            return
        extras = extras_of(self, into)  # subtle: before the change log takes the store's lock
        with self.changelog() as log:
            log.record(into, "merge", f"merged {reflection.id}", old, extras)
        entry = {k: getattr(reflection, k) for k in KEPT} | {"text": reflection.text}
        with self.rows() as rows:
            found = rows.get(ids=[into], include=["metadatas"])
            meta = dict((found["metadatas"] or [{}])[0] or {})
            meta["merged"] = json.dumps([*json.loads(str(meta.get("merged", "[]"))), entry])
            rows.update(ids=[into], metadatas=[meta])

    def merged_from(self: _Store, reflection_id: str) -> list[dict[str, Any]]:
        """The provenances merged into a stored lesson, oldest first."""
        with self.rows() as rows:
            found = rows.get(ids=[reflection_id], include=["metadatas"])
        metas = found["metadatas"] or [{}]
        return list(json.loads(str((metas[0] or {}).get("merged", "[]"))))
