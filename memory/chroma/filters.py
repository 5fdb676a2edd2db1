"""Filters on a lesson's metadata or provenance (`{"user": "alice"}`, `{"turn": {"$gte": 2}}`):
checked, as a Chroma `where` (where_of), and decided for one lesson as Chroma would (passes).

    >>> where_of({"user": "alice"})
    {'meta.user': {'$eq': 'alice'}}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from memory.chroma.rows import META, to_metadata
from memory.metadata import PROVENANCE
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Reflection

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
