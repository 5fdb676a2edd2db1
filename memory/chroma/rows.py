"""Reflections as Chroma rows and back: the id is the reflection id, the document its text, and
the metadata every provenance field, so a store can be audited without the run that wrote it.

    >>> from reflexion.core.records import REFLECTION, Reflection
    >>> r = Reflection("r1", "check the sign", "run", "reflexion", "quad", "t1", 0, 2, -1.5, 1e9)
    >>> to_metadata(r)["score"], to_metadata(r)["score_exact"]
    (-1.5, '-1.5')
    >>> from_columns({"ids": ["r1"], "documents": [r.text], "metadatas": [to_metadata(r)]}) == [r]
    True
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.records import REFLECTION, Reflection, is_own

Metadata = dict[str, str | int | float]

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
    if not is_own(r.kind):  # a reflection's row stays as it was before kinds (see RecallScope)
        meta["kind"] = r.kind
    if r.votes:
        meta["votes"] = int(r.votes)
    if r.key:
        meta["key"] = r.key
    if r.edited_on:  # a JSON list: Chroma metadata holds scalars
        meta["edited_on"] = json.dumps(list(r.edited_on))
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
        )
        for rid, doc, meta in zip(res["ids"], documents, metadatas, strict=True)
    ]


def _number(meta: Mapping[str, Any], field: str) -> float:
    exact = meta.get(field + _EXACT)
    return float(exact) if exact is not None else float(meta[field])
