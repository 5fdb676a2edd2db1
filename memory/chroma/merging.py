"""Near-duplicate lessons (`--dedup`): a new reflection at least that similar to a stored one
the trial could recall is not stored again. The stored one keeps it as an extra provenance (a
JSON list in its metadata, `merged`), and the change goes into the store's change log.

    >>> merged_from(memory, "3f9a0c1d2e4b5a69")[0]["episode"]          # doctest: +SKIP
    3
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any, Protocol

from memory.chroma.credit import extras_of
from reflexion.core.records import Reflection

KEPT = ("id", "run_id", "strategy", "env", "task_id", "seed", "episode", "score", "created")


class Mergeable(Protocol):
    """What merging needs of a store (ChromaMemory)."""

    def get(self, reflection_id: str) -> Reflection | None: ...

    def add(self, reflections: list[Reflection]) -> None: ...

    def rows(self) -> AbstractContextManager[Any]: ...

    def changelog(self) -> AbstractContextManager[Any]: ...


def merge(memory: Mergeable, into: str, reflection: Reflection) -> None:
    """Add `reflection`'s provenance (and its text) to the stored lesson `into`."""
    old = memory.get(into)
    if old is None:  # gone meanwhile (forgotten): store the new one after all
        memory.add([reflection])
        return
    extras = extras_of(memory, into)  # subtle: before the change log takes the store's lock
    with memory.changelog() as log:
        log.record(into, "merge", f"merged {reflection.id}", old, extras)
    entry = {k: getattr(reflection, k) for k in KEPT} | {"text": reflection.text}
    with memory.rows() as rows:
        found = rows.get(ids=[into], include=["metadatas"])
        meta = dict((found["metadatas"] or [{}])[0] or {})
        meta["merged"] = json.dumps([*json.loads(str(meta.get("merged", "[]"))), entry])
        rows.update(ids=[into], metadatas=[meta])


def merged_from(memory: Mergeable, reflection_id: str) -> list[dict[str, Any]]:
    """The provenances merged into a stored lesson, oldest first."""
    with memory.rows() as rows:
        found = rows.get(ids=[reflection_id], include=["metadatas"])
    metas = found["metadatas"] or [{}]
    return list(json.loads(str((metas[0] or {}).get("merged", "[]"))))
