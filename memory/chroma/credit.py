"""Credit for each stored lesson: how often it was recalled, and what the attempt made with it
in context did against the trial's attempt before: its visible score rose ("helped"), fell
("hurt") or stayed the same. A recall with no earlier attempt in its trial (an episode-1 recall
of another task's or run's lesson) counts as a recall only. Kept in the lesson's own metadata,
so it travels with the store; an edit starts it afresh.

    >>> credit_of({"recalls": 3, "helped": 1, "same": 2})
    Credit(recalls=3, helped=1, hurt=0, same=2)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from reflexion.core.records import Record

OUTCOMES = ("helped", "hurt", "same")


@dataclass(frozen=True)
class Credit(Record):
    recalls: int = 0
    helped: int = 0
    hurt: int = 0
    same: int = 0

    def __str__(self) -> str:
        if not self.recalls:
            return "never recalled"
        return f"recalled {self.recalls}: helped {self.helped}, hurt {self.hurt}, same {self.same}"


class Rows(Protocol):
    """A store whose collection can be read and written under its lock (ChromaMemory)."""

    def rows(self) -> AbstractContextManager[Any]: ...


def credit_of(meta: Mapping[str, Any]) -> Credit:
    return Credit(*(int(meta.get(k, 0) or 0) for k in ("recalls", *OUTCOMES)))


def add_credit(memory: Rows, ids: Sequence[str], outcome: str | None) -> None:
    """One more recall of each of `ids`, and one more `outcome` (None: no comparison)."""
    if outcome is not None and outcome not in OUTCOMES:
        msg = f"outcome must be one of {OUTCOMES} or None, got {outcome!r}"
        raise ValueError(msg)
    unique = list(dict.fromkeys(ids))
    if not unique:
        return
    with memory.rows() as rows:  # read and write under one lock: no count is lost
        found = rows.get(ids=unique, include=["metadatas"])
        metas = []
        for meta in found["metadatas"] or []:
            new = dict(meta)
            new["recalls"] = int(new.get("recalls", 0) or 0) + 1
            if outcome is not None:
                new[outcome] = int(new.get(outcome, 0) or 0) + 1
            metas.append(new)
        if metas:
            rows.update(ids=found["ids"], metadatas=metas)


def credits(memory: Rows) -> dict[str, Credit]:
    """Every lesson's credit, by id."""
    with memory.rows() as rows:
        found = rows.get(include=["metadatas"])
    metas = found["metadatas"] or [{}] * len(found["ids"])
    return {rid: credit_of(meta or {}) for rid, meta in zip(found["ids"], metas, strict=True)}
