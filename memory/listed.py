"""Any Memory, curated read-only: the lessons listed and searched, every change declined. What a
backend registered without a `curate` of its own offers `reflexion memory` and the web page.

    >>> from memory.window import WindowMemory
    >>> store = ListedCuration(WindowMemory(), "scratch")
    >>> store.lessons(), store.label
    ([], 'scratch store (scratch)')
    >>> store.forget(["r1"], why="x")
    Traceback (most recent call last):
    ...
    reflexion.core.curation.CannotCurate: the scratch backend cannot forget
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reflexion.core.curation import (
    CREDIT,
    EDIT,
    EVERY,
    FORGET,
    HISTORY,
    IMPORT,
    REVERT,
    CannotCurate,
    Change,
    Chosen,
    Credit,
)
from reflexion.core.protocols import Closable, Memory
from reflexion.core.records import Recalled, RecallScope, Reflection


class ListedCuration:
    """A Memory's lessons to read; `can` is empty."""

    can: frozenset[str] = frozenset()

    def __init__(self, memory: Memory, kind: str) -> None:
        self.memory, self.kind = memory, kind
        self.location = str(getattr(memory, "path", None) or f"{kind} store")
        self.label = f"{self.location} ({kind})"

    def close(self) -> None:
        if isinstance(self.memory, Closable):
            self.memory.close()

    def lessons(self, chosen: Chosen = EVERY) -> list[Reflection]:
        return [r for r in self.memory.reflections() if chosen.admits(r)]

    def get(self, reflection_id: str) -> Reflection | None:
        return self.memory.get(reflection_id)

    def search(self, text: str, k: int) -> list[Recalled]:
        return self.memory.search(text, k)

    def ranked(self, text: str, scope: RecallScope, at: float) -> list[Recalled]:
        every = len(self.memory.reflections())
        hits = self.memory.recall(text, scope, every) if every else []
        return [h for h in hits if h.reflection.created <= at]

    def forget(self, ids: Sequence[str], why: str) -> int:
        raise CannotCurate(self.kind, FORGET)

    def edit(self, reflection_id: str, text: str, why: str) -> Reflection:
        raise CannotCurate(self.kind, EDIT)

    def revert(self, reflection_id: str, why: str) -> Reflection | None:
        raise CannotCurate(self.kind, REVERT)

    def bring_in(self, reflections: Sequence[Reflection], why: str) -> int:
        raise CannotCurate(self.kind, IMPORT)

    def history(self, reflection_id: str) -> list[Change]:
        raise CannotCurate(self.kind, HISTORY)

    def credits(self) -> dict[str, Credit]:
        raise CannotCurate(self.kind, CREDIT)

    def count_audit(self, reflection_id: str, outcome: str, episode: str) -> bool:
        raise CannotCurate(self.kind, CREDIT)

    def merged_from(self, reflection_id: str) -> list[dict[str, Any]]:
        return []
