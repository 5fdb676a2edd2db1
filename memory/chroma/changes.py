"""Changing what a Chroma store holds, with history (`reflexion memory forget|edit|revert|
import`): every change first records, in the store's change log, what the reflection was and
its credit then, so that reverting a change brings both back. An edit starts the credit afresh.

    >>> forget(memory, ["3f9a0c1d2e4b5a69"], why="misleading")          # doctest: +SKIP
    1
    >>> revert(memory, "3f9a0c1d2e4b5a69").text                         # doctest: +SKIP
    'Check the sign of the step.'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from memory.chroma.credit import extras_of, set_extras
from memory.chroma.store import ChromaMemory
from reflexion.core.errors import UsageError
from reflexion.core.records import Reflection


def forget(memory: ChromaMemory, ids: Sequence[str], why: str) -> int:
    """Remove these reflections, keeping each (and its credit) in its history; returns how many
    existed."""
    found = [r for r in (memory.get(i) for i in dict.fromkeys(ids)) if r is not None]
    kept = {r.id: extras_of(memory, r.id) for r in found}
    with memory.changelog() as log:
        for r in found:
            log.record(r.id, "forget", why, r, kept[r.id])
    return memory.delete([r.id for r in found])


def edit(memory: ChromaMemory, reflection_id: str, text: str, why: str) -> Reflection:
    """New text for a reflection (embedded again), its counts started afresh; the old text and
    counts go into its history."""
    old = _existing(memory, reflection_id)
    extras = extras_of(memory, old.id)
    with memory.changelog() as log:
        log.record(old.id, "edit", why, old, extras)
    new = dataclasses.replace(old, text=text)
    memory.add([new])
    set_extras(memory, new.id, {k: extras[k] for k in ("merged",) if k in extras})
    return new


def revert(memory: ChromaMemory, reflection_id: str, why: str = "revert") -> Reflection | None:
    """Undo the latest change to a reflection (the undoing is itself a change); returns the
    reflection as it is now, or None when the change undone was its import."""
    with memory.changelog() as log:
        changes = log.with_extras(reflection_id)
    if not changes:
        msg = f"reflection {reflection_id!r} has no change to revert in {memory.location}"
        raise UsageError(msg)
    (undone, extras), current = changes[-1], memory.get(reflection_id)
    now = extras_of(memory, reflection_id) if current is not None else {}
    with memory.changelog() as log:
        log.record(reflection_id, "revert", why, current, now)
    if undone.before is None:
        memory.delete([reflection_id])
    else:
        memory.add([undone.before])
        set_extras(memory, reflection_id, extras)
    return undone.before


def bring_in(memory: ChromaMemory, reflections: Sequence[Reflection], why: str) -> int:
    """Add reflections from elsewhere (an export), recording what each id held before."""
    current = {r.id: memory.get(r.id) for r in reflections}
    kept = {rid: extras_of(memory, rid) for rid, r in current.items() if r is not None}
    with memory.changelog() as log:
        for r in reflections:
            log.record(r.id, "import", why, current[r.id], kept.get(r.id))
    memory.add(reflections)
    return len(reflections)


def _existing(memory: ChromaMemory, reflection_id: str) -> Reflection:
    found = memory.get(reflection_id)
    if found is None:
        msg = f"no reflection with id {reflection_id!r} in {memory.location}"
        raise UsageError(msg)
    return found
