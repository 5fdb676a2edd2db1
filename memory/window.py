"""The `window` memory backend, the original Reflexion code's memory: a plain in-process list,
recalled as the last k lessons, kept in the run folder's `window.jsonl`. That file is also its
history, so a person can forget, edit, revert and import lessons; it keeps no credit (a run never
counts the window's recalls) and never merges lessons.

    >>> from reflexion.core.lesson_records import Reflection
    >>> store = WindowMemory()
    >>> store.bring_in([Reflection("r1", "check the sign", "run", "reflexion-window", "quad",
    ...                             "q1", 0, 1, -2.0, 0.0)], why="import")
    1
    >>> store.forget(["r1"], why="wrong"), [c.action for c in store.history("r1")]
    (1, ['import', 'forget'])
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

from memory.backend import Access, Backend, ReadOnly, StoreSettings
from reflexion.core.curation import (
    EDIT,
    FORGET,
    HISTORY,
    IMPORT,
    REVERT,
    Change,
    lesson_text,
    restored,
)
from reflexion.core.errors import UsageError
from reflexion.core.jsonl import JsonlLog, read_jsonl
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection

WINDOW_FILE = "window.jsonl"  # in the run folder, so the reflections can be inspected too


class WindowMemory(ReadOnly):
    """The last k admitted reflections, no embeddings, no ranking (`similarity` is None).

    `recall` and `search` return them in the order they were added, OLDEST FIRST (newest last),
    as the original code pasted its reflection list into the prompt. Re-adding an id replaces the
    stored reflection and keeps its place. With a `path`, every added reflection is also appended
    to that JSON-lines file and read back on the next start, so a resumed run and `reflexion
    memory` see them; the last line written for an id wins.

        >>> from reflexion.core.lesson_records import RecallScope, Reflection
        >>> m = WindowMemory()
        >>> m.add([Reflection("r1", "check the sign", "run", "reflexion-window", "quad", "t1",
        ...                   seed=0, episode=1, score=-2.0, created=0.0)])
        >>> scope = RecallScope("quad", "t1", "run", "reflexion-window", seed=0, episode=2)
        >>> [x.reflection.text for x in m.recall("", scope, k=3)]
        ['check the sign']
    """

    kind = "window"
    can = frozenset({FORGET, EDIT, REVERT, HISTORY, IMPORT})

    def __init__(self, path: Path | None = None) -> None:
        self._items: dict[str, Reflection] = {}  # dicts keep insertion order
        # The runner calls from worker threads; the lock keeps a reader from seeing a half-update.
        self._lock = threading.Lock()
        self.path = path
        self.location = str(path or "a window in this process")
        self.label = f"{self.location} (reflexion-window)"
        self._log: JsonlLog | None = None
        self._changes: dict[str, list[Change]] = {}  # the changes to each lesson, by id
        for record in read_jsonl(path) if path is not None else []:
            self._replay(record)

    @classmethod
    def opened(cls, where: StoreSettings, access: Access) -> WindowMemory | None:
        """The window of the run folder `where.folder` (see memory.registry.open_store, which
        asks only when its file is there, or to make one)."""
        return cls(where.folder / WINDOW_FILE)

    def _replay(self, record: dict[str, Any]) -> None:
        rid, change = record["id"], record.get("change")
        if change is not None:  # a change line (memory forget|edit|revert|import, a revision)
            done = self._changes.setdefault(rid, [])
            before = self._items.get(rid)
            done.append(
                Change(rid, len(done) + 1, change["action"], change["when"], change["why"], before)
            )
        if record.get("deleted"):
            self._items.pop(rid, None)
        else:
            self._items[rid] = Reflection.from_dict(record)

    def _write(self, record: dict[str, object]) -> None:
        if self.path is None:
            return
        if self._log is None:  # subtle: opened on first write, so a refused run writes nothing
            self._log = JsonlLog(self.path)
        self._log.append(record)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the run's contract (Memory) -----------------------------------------------------------

    def add(self, reflections: Sequence[Reflection]) -> None:
        """Store reflections; an id already stored is replaced in place (idempotent)."""
        with self._lock:
            for r in reflections:
                self._items[r.id] = r
                self._write(r.to_dict())

    def recall(self, text: str, scope: RecallScope, k: int) -> list[Recalled]:
        """The last k reflections that `scope` admits, oldest first; `text` is ignored."""
        with self._lock:
            admitted = [r for r in self._items.values() if scope.admits(r)]
        return _last(admitted, k)

    def search(self, text: str, k: int) -> list[Recalled]:
        """The last k reflections of any provenance, oldest first; `text` is ignored (the
        window has no index: similarity None, see `ranked`)."""
        with self._lock:
            items = list(self._items.values())
        return _last(items, k)

    def get(self, reflection_id: str) -> Reflection | None:
        """The reflection with this id, or None."""
        with self._lock:
            return self._items.get(reflection_id)

    def reflections(self) -> list[Reflection]:
        """Every stored reflection, sorted by `created` then id (as ChromaMemory does)."""
        with self._lock:
            items = list(self._items.values())
        return sorted(items, key=lambda r: (r.created, r.id))

    def delete(self, ids: Sequence[str]) -> int:
        """Remove these reflections; returns how many existed."""
        with self._lock:
            gone = [i for i in dict.fromkeys(ids) if self._items.pop(i, None) is not None]
            for i in gone:
                self._write({"id": i, "deleted": True})
            return len(gone)

    def revise(self, reflection: Reflection, why: str) -> None:
        """Store `reflection` in place of the lesson with its id, kept in its history (Revising)."""
        action = EDIT if self.get(reflection.id) is not None else IMPORT
        self._change(reflection.id, action, why, reflection)

    def retire(self, reflection_id: str, why: str) -> None:
        """Remove a lesson, kept in its history (Revising)."""
        if self.get(reflection_id) is not None:
            self._change(reflection_id, FORGET, why, None)

    # -- the people's contract (Curated) -------------------------------------------------------

    def ranked(self, text: str, scope: RecallScope, at: float) -> list[Recalled]:
        """Newest first: a recall of k returns the last k lessons `scope` admits."""
        admitted = [r for r in self.reflections() if r.created <= at and scope.admits(r)]
        return [Recalled(r) for r in reversed(admitted)]

    def forget(self, ids: Sequence[str], why: str) -> int:
        found = [i for i in dict.fromkeys(ids) if self.get(i) is not None]
        for rid in found:
            self._change(rid, FORGET, why, None)
        return len(found)

    def edit(self, reflection_id: str, text: str, why: str) -> Reflection:
        old = self.get(reflection_id)
        if old is None:
            msg = f"no reflection with id {reflection_id!r} in {self.location}"
            raise UsageError(msg)
        new = dataclasses.replace(old, text=lesson_text(text))
        self._change(reflection_id, EDIT, why, new)
        return new

    def revert(self, reflection_id: str, why: str, to: int | None = None) -> Reflection | None:
        done = self.history(reflection_id)
        if not done:
            msg = f"reflection {reflection_id!r} has no change to revert in {self.location}"
            raise UsageError(msg)
        before = restored(done, to).before
        self._change(reflection_id, REVERT, why, before)
        return before

    def bring_in(self, reflections: Sequence[Reflection], why: str) -> int:
        for r in reflections:
            self._change(r.id, IMPORT, why, r)
        return len(reflections)

    def history(self, reflection_id: str) -> list[Change]:
        """Every change to this lesson, oldest first."""
        with self._lock:
            return list(self._changes.get(reflection_id, []))

    def changed_ids(self) -> list[str]:
        """Every lesson id with a change in the file, stored now or forgotten."""
        with self._lock:
            return sorted(self._changes)

    def _change(self, rid: str, action: str, why: str, after: Reflection | None) -> None:
        """The one change with history (a person's or the run's): `after` in place of the lesson
        (None: it is removed), kept in the file, so that its history is the file's lines for it."""
        record = after.to_dict() if after is not None else {"id": rid, "deleted": True}
        record["change"] = {"action": action, "why": why, "when": time.time()}
        with self._lock:
            self._replay(record)
            self._write(record)


def _last(items: list[Reflection], k: int) -> list[Recalled]:
    # subtle: items[-0:] is the whole list, so k <= 0 needs its own branch.
    if k <= 0:
        return []
    return [Recalled(r, None) for r in items[-k:]]


WINDOW = Backend(
    "window",
    "the last k reflections of the task, a plain list (the original Reflexion code's memory)",
    open=WindowMemory.opened,
    files=(WINDOW_FILE,),
    where=lambda where: f"no {where.folder / WINDOW_FILE}",
)
