"""A change with history, written once for a Chroma store: a person's (`reflexion memory forget|
edit|revert|import`) and a run's own (a rule's new votes or text, a new cheatsheet, a rule
dropped). Each change first records, in the store's change log (a second collection beside the
lessons), what the lesson was, when and why, and its credit then, so that reverting the change
brings both back. An edit starts the credit afresh. The history of a lesson is its changes in
order; reverting undoes the latest one (the undoing is itself a change).

    >>> memory.forget(["3f9a0c1d2e4b5a69"], why="misleading")          # doctest: +SKIP
    1
    >>> [v.action for v in memory.history("3f9a0c1d2e4b5a69")]          # doctest: +SKIP
    ['forget']
    >>> memory.revert("3f9a0c1d2e4b5a69", why="it was right").text     # doctest: +SKIP
    'Check the sign of the step.'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory.chroma.credit import COUNTS, EXTRAS
from reflexion.core.curation import EDIT, FORGET, IMPORT, REVERT, Change, lesson_text, restored
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Reflection

if TYPE_CHECKING:
    from memory.chroma.rows import Rows


def extras_of(store: Rows, lesson_id: str) -> dict[str, Any]:
    """The lesson's counts, audited episodes and merged provenances (kept with a change,
    so that reverting it brings them back)."""
    with store.rows() as rows:
        found = rows.get(ids=[lesson_id], include=["metadatas"])
    meta = (found["metadatas"] or [{}])[0] or {}
    return {k: meta[k] for k in EXTRAS if k in meta}


def set_extras(store: Rows, lesson_id: str, extras: Mapping[str, Any]) -> None:
    """Give a stored lesson these extras; counts not in `extras` start afresh (at 0)."""
    fresh: dict[str, Any] = {k: 0 for k in COUNTS} | {"audited": "[]", "merged": "[]"}
    fresh["credited"] = "[]"
    with store.rows() as rows:
        if rows.get(ids=[lesson_id], include=[])["ids"]:
            rows.update(ids=[lesson_id], metadatas=[fresh | dict(extras)])


@dataclass(frozen=True)
class History:
    """A Chroma store's changes with history, over its rows (memory.chroma.rows.Rows): every
    change of a lesson logged, with its credit, before it is made (a part of ChromaMemory).

        >>> History(rows).forget(["3f9a0c1d2e4b5a69"], why="misleading")  # doctest: +SKIP
        1
    """

    rows: Rows

    def change(
        self,
        action: str,
        why: str,
        after: Sequence[tuple[str, Reflection | None]],
        credit: bool = True,
    ) -> None:
        """The one change with history, a person's or the run's: for each (id, lesson), what is
        stored under that id now goes into the change log, with its credit where `credit` (a
        run's revision logs none: a revert of it starts the credit afresh); then the new lesson
        takes its place (None: it is removed), its credit kept unless the caller sets it."""
        before = {rid: self.rows.get(rid) for rid, _ in after}
        kept = {
            rid: extras_of(self.rows, rid) for rid, r in before.items() if credit and r is not None
        }
        with self.rows.changelog() as log:
            for rid, _ in after:
                log.record(rid, action, why, before[rid], kept.get(rid))
        gone = [rid for rid, new in after if new is None and before[rid] is not None]
        stored = [new for _, new in after if new is not None]
        if gone:
            self.rows.delete(gone)
        if stored:
            self.rows.add(stored)

    def forget(self, ids: Sequence[str], why: str) -> int:
        """Remove these reflections, keeping each (and its credit) in its history; returns how
        many existed."""
        found = [rid for rid in dict.fromkeys(ids) if self.rows.get(rid) is not None]
        self.change(FORGET, why, [(rid, None) for rid in found])
        return len(found)

    def edit(self, reflection_id: str, text: str, why: str) -> Reflection:
        """New text for a reflection (embedded again), its counts started afresh; the old text
        and counts go into its history."""
        old = self.rows.get(reflection_id)
        if old is None:
            msg = f"no reflection with id {reflection_id!r} in {self.rows.location}"
            raise UsageError(msg)
        merged = {k: v for k, v in extras_of(self.rows, old.id).items() if k == "merged"}
        new = dataclasses.replace(old, text=lesson_text(text))
        self.change(EDIT, why, [(old.id, new)])
        set_extras(self.rows, new.id, merged)
        return new

    def revert(
        self, reflection_id: str, why: str = "revert", to: int | None = None
    ) -> Reflection | None:
        """Undo the latest change to a reflection, or bring back what it was before change `to`
        (its credit then too); returns the reflection as it is now, or None when it was not
        stored before that change (its import)."""
        with self.rows.changelog() as log:
            changes = log.with_extras(reflection_id)
        if not changes:
            msg = f"reflection {reflection_id!r} has no change to revert in {self.rows.location}"
            raise UsageError(msg)
        undone = restored([change for change, _ in changes], to)
        extras = changes[undone.number - 1][1]
        self.change(REVERT, why, [(reflection_id, undone.before)])
        if undone.before is not None:
            set_extras(self.rows, reflection_id, extras)
        return undone.before

    def bring_in(self, reflections: Sequence[Reflection], why: str) -> int:
        """Add reflections from elsewhere (an export), recording what each id held before."""
        self.change(IMPORT, why, [(r.id, r) for r in reflections])
        return len(reflections)

    def history(self, reflection_id: str) -> list[Change]:
        """Every change to this lesson, oldest first."""
        with self.rows.changelog() as log:
            return log.of(reflection_id)

    def changed_ids(self) -> list[str]:
        """Every lesson id with a change in the log, stored now or forgotten."""
        with self.rows.changelog() as log:
            return log.ids()

    def revise(self, reflection: Reflection, why: str) -> None:
        """Store `reflection` in place of the lesson with its id (a rule's new text or votes, a
        new cheatsheet), the lesson it replaces kept in its history (Revising)."""
        action = EDIT if self.rows.get(reflection.id) is not None else IMPORT  # new: it came in
        self.change(action, why, [(reflection.id, reflection)], credit=False)

    def retire(self, reflection_id: str, why: str) -> None:
        """Remove a lesson (a rule voted down to 0), kept in its history (Revising)."""
        if self.rows.get(reflection_id) is not None:
            self.change(FORGET, why, [(reflection_id, None)], credit=False)
