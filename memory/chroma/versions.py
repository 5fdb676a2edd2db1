"""Every change to a stored reflection (forget, edit, revert, import), kept in the store itself:
a second collection holding, per change, what the reflection was before, when and why. The
history of a reflection is its changes in order; reverting undoes the latest one.

    >>> [v.action for v in memory.history("3f9a0c1d2e4b5a69")]          # doctest: +SKIP
    ['edit', 'forget', 'revert']
"""

from __future__ import annotations

import json
import time
from typing import Any

from reflexion.core.curation import Change
from reflexion.core.records import Reflection

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
