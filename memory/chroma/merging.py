"""Near-duplicate lessons (`--dedup`): a new reflection at least that similar to a stored one
the trial could recall is not stored again. The stored one keeps it as an extra provenance (a
JSON list in its metadata, `merged`), and the change goes into the store's change log.

    >>> memory.merged_from("3f9a0c1d2e4b5a69")[0]["episode"]          # doctest: +SKIP
    3
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory.chroma.history import extras_of
from reflexion.core.lesson_records import Reflection

if TYPE_CHECKING:
    from memory.chroma.rows import Rows

KEPT = ("id", "run_id", "strategy", "env", "task_id", "seed", "episode", "score", "created")


@dataclass(frozen=True)
class Merges:
    """A Chroma store's merged near-duplicates, over its rows (memory.chroma.rows.Rows; a part
    of ChromaMemory).

        >>> Merges(rows).merge("3f9a0c1d2e4b5a69", near_copy)  # doctest: +SKIP
    """

    rows: Rows

    def merge(self, into: str, reflection: Reflection) -> None:
        """Add `reflection`'s provenance (and its text) to the stored lesson `into`: a change of
        the lesson's row only, kept in the change log as the other changes are
        (memory.chroma.history)."""
        old = self.rows.get(into)
        if old is None:  # gone meanwhile (forgotten): store the new one after all
            self.rows.add([reflection])
            return
        extras = extras_of(self.rows, into)  # subtle: before the change log takes the lock
        with self.rows.changelog() as log:
            log.record(into, "merge", f"merged {reflection.id}", old, extras)
        entry = {k: getattr(reflection, k) for k in KEPT} | {"text": reflection.text}
        with self.rows.rows() as rows:
            found = rows.get(ids=[into], include=["metadatas"])
            meta = dict((found["metadatas"] or [{}])[0] or {})
            meta["merged"] = json.dumps([*json.loads(str(meta.get("merged", "[]"))), entry])
            rows.update(ids=[into], metadatas=[meta])

    def merged_from(self, reflection_id: str) -> list[dict[str, Any]]:
        """The provenances merged into a stored lesson, oldest first."""
        with self.rows.rows() as rows:
            found = rows.get(ids=[reflection_id], include=["metadatas"])
        metas = found["metadatas"] or [{}]
        return list(json.loads(str((metas[0] or {}).get("merged", "[]"))))
