"""Reflections as Chroma rows and back: the id is the reflection id, the document its text, and
the metadata every provenance field, so a store can be audited without the run that wrote it.

    >>> from reflexion.core.lesson_records import REFLECTION, Reflection
    >>> r = Reflection("r1", "check the sign", "run", "reflexion", "quad", "t1", 0, 2, -1.5, 1e9)
    >>> to_metadata(r)["score"], to_metadata(r)["score_exact"]
    (-1.5, '-1.5')
    >>> from_columns({"ids": ["r1"], "documents": [r.text], "metadatas": [to_metadata(r)]}) == [r]
    True
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from memory.metadata import PROVENANCE
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import REFLECTION, Reflection, is_own

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
        )
        for rid, doc, meta in zip(res["ids"], documents, metadatas, strict=True)
    ]


def _number(meta: Mapping[str, Any], field: str) -> float:
    exact = meta.get(field + _EXACT)
    return float(exact) if exact is not None else float(meta[field])


# How a filter compares, as Chroma's `where` does (a key a row lacks passes only $ne and $nin)
OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda have, want: have == want,
    "$ne": lambda have, want: have != want,
    "$gt": lambda have, want: have > want,
    "$gte": lambda have, want: have >= want,
    "$lt": lambda have, want: have < want,
    "$lte": lambda have, want: have <= want,
    "$in": lambda have, want: have in want,
    "$nin": lambda have, want: have not in want,
}
_ABSENT_PASSES = ("$ne", "$nin")
Filters = Mapping[str, Any]  # key -> a value (equal to it) or {"$op": value}


def column(key: str) -> str:
    """The row's column a filter's key names: a lesson's own field as it is, else its metadata.

    >>> column("task_id"), column("user")
    ('task_id', 'meta.user')
    """
    return key if key in PROVENANCE else META + key


def conditions(filters: Filters | None) -> list[tuple[str, str, Any]]:
    """The filter as (column, operator, value) triples, checked (a UsageError says what is
    wrong); every one must hold.

    >>> conditions({"user": "alice", "turn": {"$gte": 2}})
    [('meta.user', '$eq', 'alice'), ('meta.turn', '$gte', 2)]
    """
    out = []
    for key, test in (filters or {}).items():
        # subtle: a reflection's row has no `kind` column (see to_metadata), so none is filtered
        if key in ("id", "text", "kind") or not isinstance(key, str):
            msg = (
                f"cannot filter on {key!r}: filter on metadata, or on run_id, strategy, env, "
                "task_id, seed or episode"
            )
            raise UsageError(msg)
        pairs = test.items() if isinstance(test, Mapping) else [("$eq", test)]
        for op, value in pairs:
            if op not in OPERATORS:
                msg = f"filter {key}: unknown operator {op!r}; known: {', '.join(OPERATORS)}"
                raise UsageError(msg)
            listed = isinstance(value, list | tuple)
            if listed != (op in ("$in", "$nin")) or not all(
                isinstance(v, str | int | float | bool) for v in (value if listed else [value])
            ):
                msg = f"filter {key} {op}: expected {'a list of ' * (op in ('$in', '$nin'))}scalars"
                raise UsageError(msg)
            out.append((column(key), op, list(value) if listed else value))
    return out


def where_of(filters: Filters | None) -> dict[str, Any] | None:
    """The filter as a Chroma `where` (None: no filter).

    >>> where_of({"user": "alice", "session": {"$in": ["s1", "s2"]}})
    {'$and': [{'meta.user': {'$eq': 'alice'}}, {'meta.session': {'$in': ['s1', 's2']}}]}
    """
    clauses = [{name: {op: value}} for name, op, value in conditions(filters)]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def passes(r: Reflection, filters: Filters | None) -> bool:
    """Whether a lesson passes the filter, as Chroma's `where_of(filters)` would decide.

    >>> r = Reflection("r", "t", "run", "s", "e", "t1", 0, 1, 0.5, 2.0, metadata={"user": "bo"})
    >>> passes(r, {"user": "bo"}), passes(r, {"user": "al"}), passes(r, {"team": {"$ne": "x"}})
    (True, False, True)
    """
    row = to_metadata(r)
    for name, op, value in conditions(filters):
        if name not in row:
            if op not in _ABSENT_PASSES:
                return False
            continue
        try:
            if not OPERATORS[op](row[name], value):
                return False
        except TypeError:  # a string compared with a number: Chroma admits no such row
            return False
    return True
