"""The window's lessons as a person curates them (reflexion.core.curation.Curated): its file,
`window.jsonl`, is also its history, so lessons can be forgotten, edited, reverted and imported.
It keeps no credit (a run never counts the window's recalls) and never merges lessons.

    >>> from reflexion.core.records import Reflection
    >>> store = WindowCuration(WindowMemory())
    >>> store.bring_in([Reflection("r1", "check the sign", "run", "reflexion-window", "quad",
    ...                             "q1", 0, 1, -2.0, 0.0)], why="import")
    1
    >>> store.forget(["r1"], why="wrong"), [c.action for c in store.history("r1")]
    (1, ['import', 'forget'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Self

from memory.window import WindowMemory
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
from reflexion.core.errors import UsageError
from reflexion.core.records import Recalled, RecallScope, Reflection


class WindowCuration:
    """The verbs a plain list can do, on one WindowMemory (closed with it)."""

    kind = "window"
    can = frozenset({FORGET, EDIT, REVERT, HISTORY, IMPORT})

    def __init__(self, memory: WindowMemory) -> None:
        self.memory = memory
        self.location = str(memory.path or "a window in this process")
        self.label = f"{self.location} (reflexion-window)"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.memory.close()

    def lessons(self, chosen: Chosen = EVERY) -> list[Reflection]:
        return [r for r in self.memory.reflections() if chosen.admits(r)]

    def get(self, reflection_id: str) -> Reflection | None:
        return self.memory.get(reflection_id)

    def search(self, text: str, k: int) -> list[Recalled]:
        """The newest k lessons, similarity None: the window has no index (see `ranked`)."""
        return self.memory.search(text, k)

    def ranked(self, text: str, scope: RecallScope, at: float) -> list[Recalled]:
        """Newest first: a recall of k returns the last k lessons `scope` admits."""
        admitted = [r for r in self.memory.reflections() if r.created <= at and scope.admits(r)]
        return [Recalled(r) for r in reversed(admitted)]

    def forget(self, ids: Sequence[str], why: str) -> int:
        found = [i for i in dict.fromkeys(ids) if self.memory.get(i) is not None]
        for rid in found:
            self.memory.change(rid, FORGET, why, None)
        return len(found)

    def edit(self, reflection_id: str, text: str, why: str) -> Reflection:
        old = self.memory.get(reflection_id)
        if old is None:
            msg = f"no reflection with id {reflection_id!r} in {self.location}"
            raise UsageError(msg)
        new = dataclasses.replace(old, text=text)
        self.memory.change(reflection_id, EDIT, why, new)
        return new

    def revert(self, reflection_id: str, why: str) -> Reflection | None:
        done = self.memory.changes(reflection_id)
        if not done:
            msg = f"reflection {reflection_id!r} has no change to revert in {self.location}"
            raise UsageError(msg)
        before = done[-1].before
        self.memory.change(reflection_id, REVERT, why, before)
        return before

    def bring_in(self, reflections: Sequence[Reflection], why: str) -> int:
        for r in reflections:
            self.memory.change(r.id, IMPORT, why, r)
        return len(reflections)

    def history(self, reflection_id: str) -> list[Change]:
        return self.memory.changes(reflection_id)

    def credits(self) -> dict[str, Credit]:
        raise CannotCurate(self.kind, CREDIT)

    def count_audit(self, reflection_id: str, outcome: str, episode: str) -> bool:
        raise CannotCurate(self.kind, CREDIT)

    def merged_from(self, reflection_id: str) -> list[dict[str, Any]]:
        return []  # the window never merges lessons
