"""Every change to a stored reflection (forget, edit, revert, import), kept in the store itself:
a second collection holding, per change, what the reflection was before, when and why. The
history of a reflection is its changes in order; reverting undoes the latest one.

    >>> [v.action for v in memory.history("3f9a0c1d2e4b5a69")]          # doctest: +SKIP
    ['edit', 'forget', 'revert']
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from reflexion.core.records import Record, Reflection

VERSIONS = "reflection_versions"


@dataclass(frozen=True)
class Version(Record):
    """One change: the reflection as it was before it (None: it was not stored)."""

    reflection_id: str
    number: int  # 1, 2, ... per reflection
    action: str  # "forget", "edit", "revert" or "import"
    when: float
    why: str
    before: Reflection | None


class Versions:
    """The change log of one store (its own collection, beside the reflections)."""

    def __init__(self, client: Any) -> None:
        import chromadb.errors

        self._client = client
        try:  # made by the first change: reading a store's history must not write to it
            self._collection: Any = client.get_collection(VERSIONS, embedding_function=None)
        except chromadb.errors.NotFoundError:
            self._collection = None

    def record(self, rid: str, action: str, why: str, before: Reflection | None) -> Version:
        if self._collection is None:
            # no vectors to search: each entry carries a 1-d placeholder, as Chroma wants one
            self._collection = self._client.get_or_create_collection(
                VERSIONS, embedding_function=None
            )
        number = len(self.of(rid)) + 1
        version = Version(rid, number, action, time.time(), why, before)
        meta = {"reflection_id": rid, "number": number, "action": action, "when": version.when}
        self._collection.add(
            ids=[f"{rid}#{number:05d}"],
            embeddings=[[0.0]],
            documents=[json.dumps(before.to_dict() if before else None)],
            metadatas=[meta | {"why": why}],
        )
        return version

    def of(self, rid: str) -> list[Version]:
        """The changes to `rid`, oldest first."""
        if self._collection is None:
            return []
        res = self._collection.get(where={"reflection_id": rid}, include=["documents", "metadatas"])
        out = []
        for doc, meta in zip(res["documents"] or [], res["metadatas"] or [], strict=True):
            before = json.loads(doc) if doc else None
            out.append(
                Version(
                    rid,
                    int(meta["number"]),
                    str(meta["action"]),
                    float(meta["when"]),
                    str(meta.get("why", "")),
                    Reflection.from_dict(before) if before else None,
                )
            )
        return sorted(out, key=lambda v: v.number)
