"""What a person can do to a store of lessons (`reflexion memory`, the web memory page), apart
from what a run reads and writes (the Memory protocol). Every backend offers a `Curated` view of
its store; what it cannot do it declares in `can`, and a call to it raises `CannotCurate`, so
the CLI and the page say "the window backend cannot credit" instead of "no reflection with id".

    >>> class Listed:
    ...     kind, can = "list", frozenset({"forget"})
    >>> require(Listed(), "forget")
    >>> require(Listed(), "edit")
    Traceback (most recent call last):
    ...
    reflexion.core.curation.CannotCurate: the list backend cannot edit
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection
from reflexion.core.records import Record

# What a store may offer beyond listing and reading its lessons (which every store does).
FORGET, EDIT, REVERT, HISTORY, IMPORT = "forget", "edit", "revert", "history", "import"
CREDIT = "credit"  # keeps each lesson's credit, and the audit's counts (memory audit, prune)
MERGE = "merge"  # merges near-duplicate lessons (--dedup), keeping who was merged in
FILTER = "filter"  # filters lessons on their metadata and provenance (Filtering)
VERBS = frozenset({FORGET, EDIT, REVERT, HISTORY, IMPORT, CREDIT, MERGE, FILTER})
OUTCOMES = ("helped", "hurt", "same")


# how a verb reads in a sentence
SAID = {CREDIT: "keep credit", MERGE: "merge lessons", FILTER: "filter lessons on metadata"}


class CannotCurate(UsageError):
    """A verb the store's backend declares it cannot do."""

    def __init__(self, kind: str, verb: str) -> None:
        super().__init__(f"the {kind} backend cannot {SAID.get(verb, verb)}")
        self.kind, self.verb = kind, verb


class Declares(Protocol):
    kind: str
    can: frozenset[str]


def require(store: Declares, verb: str) -> None:
    """Raise CannotCurate unless `store` declares `verb` (see the module's example)."""
    if verb not in store.can:
        raise CannotCurate(store.kind, verb)


@dataclass(frozen=True)
class Credit(Record):
    """How often a lesson was recalled and what followed (see memory.chroma.credit), and what
    `memory audit` measured when it reran an episode without it.

    >>> str(Credit(recalls=2, helped=1, same=1))
    'recalled 2: helped 1, hurt 0, same 1'
    """

    recalls: int = 0
    helped: int = 0
    hurt: int = 0
    same: int = 0
    audit_helped: int = 0  # reruns without the lesson that scored lower (it helped)
    audit_hurt: int = 0  # ... that scored higher (it hurt)
    audit_same: int = 0

    @property
    def harmful(self) -> bool:
        """Measured to hurt more often than to help (by `memory audit`)."""
        return self.audit_hurt > self.audit_helped

    @property
    def audited(self) -> int:
        return self.audit_helped + self.audit_hurt + self.audit_same

    def __str__(self) -> str:
        said = "never recalled"
        if self.recalls:
            said = (
                f"recalled {self.recalls}: helped {self.helped}, hurt {self.hurt}, same {self.same}"
            )
        if self.audited:
            said += (
                f"; audit of {self.audited}: helped {self.audit_helped}, hurt {self.audit_hurt}, "
                f"same {self.audit_same}"
            )
        return said


@dataclass(frozen=True)
class Change(Record):
    """One change to a stored lesson: the lesson as it was before it (None: it was not stored).

    >>> Change("r1", 1, "forget", 0.0, "misleading", None).action
    'forget'
    """

    reflection_id: str
    number: int  # 1, 2, ... per lesson
    action: str  # "forget", "edit", "revert", "import" or "merge"
    when: float  # unix time
    why: str
    before: Reflection | None


def utc(seconds: float) -> str:
    """A unix time (a lesson's `created`, a Change's `when`) as `reflexion memory` and the web
    memory page print it.

    >>> utc(0.0)
    '1970-01-01T00:00:00Z'
    """
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def restored(changes: Sequence[Change], to: int | None) -> Change:
    """The change a revert undoes: the latest, or with `to`, change number `to` (the lesson as it
    was before it comes back); a UsageError names the numbers there are.

    >>> done = [Change("r1", n, "edit", 0.0, "", None) for n in (1, 2, 3)]
    >>> restored(done, None).number, restored(done, 1).number
    (3, 1)
    >>> restored(done, 4)
    Traceback (most recent call last):
    ...
    reflexion.core.errors.UsageError: revert --to 4: reflection 'r1' has changes #1 to #3
    """
    if not changes:
        msg = "a lesson with no change has nothing to revert"
        raise UsageError(msg)
    if to is None:
        return changes[-1]
    if not 1 <= to <= len(changes):
        rid, last = changes[-1].reflection_id, len(changes)
        numbers = "change #1" if last == 1 else f"changes #1 to #{last}"
        msg = f"revert --to {to}: reflection {rid!r} has {numbers}"
        raise UsageError(msg)
    return changes[to - 1]


def lesson_text(text: str) -> str:
    """A lesson's new text, refused when there is none: an empty lesson would still be recalled.

    >>> lesson_text("  Check the sign. ")
    'Check the sign.'
    >>> lesson_text(" ")
    Traceback (most recent call last):
    ...
    reflexion.core.errors.UsageError: the new text is empty: to remove a lesson, forget it
    """
    if not text.strip():
        msg = "the new text is empty: to remove a lesson, forget it"
        raise UsageError(msg)
    return text.strip()


@dataclass(frozen=True)
class Chosen(Record):
    """Which lessons a command acts on: every condition given must hold (none: all lessons).

    >>> r = Reflection("r1", "x", "run", "reflexion", "quad", "q2", 0, 1, 0.0, 5.0)
    >>> Chosen(task="q2").admits(r), Chosen(task="q2", before=5.0).admits(r)
    (True, False)
    """

    ids: tuple[str, ...] = ()
    task: str | None = None  # a task id, as the env names it (`q2`)
    env: str | None = None
    strategy: str | None = None
    run: str | None = None
    before: float | None = None  # made before this unix time
    kind: str | None = None  # a kind of lesson (reflexion.core.lesson_records.Kind)

    def admits(self, r: Reflection) -> bool:
        return (
            (not self.ids or r.id in self.ids)
            and (self.task is None or r.task_id == self.task)
            and (self.env is None or r.env == self.env)
            and (self.strategy is None or r.strategy == self.strategy)
            and (self.run is None or r.run_id == self.run)
            and (self.before is None or r.created < self.before)
            and (self.kind is None or r.kind == self.kind)
        )


EVERY = Chosen()  # every lesson


@runtime_checkable
class Curated(Protocol):
    """A store of lessons as a person curates it. `kind` is its backend's name; `can` holds the
    verbs (above) it offers, and the others raise CannotCurate. Changes are kept in the lesson's
    history where the store offers HISTORY."""

    kind: str
    can: frozenset[str]
    location: str  # where it is, for messages
    label: str  # what and where, one line, for listings

    def lessons(self, chosen: Chosen = EVERY) -> list[Reflection]:
        """The lessons `chosen` admits, oldest first."""
        ...

    def get(self, reflection_id: str) -> Reflection | None: ...

    def search(self, text: str, k: int) -> list[Recalled]:
        """Up to k lessons most similar to `text` (similarity None: the store has no index)."""
        ...

    def ranked(self, text: str, scope: RecallScope, at: float) -> list[Recalled]:
        """The lessons stored by time `at` that `scope` admits, in the order this store's recall
        puts them (its first k are what a recall of k returned), for `memory why`."""
        ...

    def forget(self, ids: Sequence[str], why: str) -> int: ...

    def edit(self, reflection_id: str, text: str, why: str) -> Reflection: ...

    def revert(self, reflection_id: str, why: str, to: int | None = None) -> Reflection | None:
        """Undo the latest change, or with `to`, bring back the lesson as it was before its
        change number `to` (as `history` numbers them); returns the lesson as it is now (None:
        not stored). Either way the revert is itself a change."""
        ...

    def bring_in(self, reflections: Sequence[Reflection], why: str) -> int: ...

    def history(self, reflection_id: str) -> list[Change]: ...

    def changed_ids(self) -> list[str]:
        """The id of every lesson with a change in its history, stored now or not (a forgotten
        lesson is named by them, a prefix of its id included)."""
        ...

    def credits(self) -> dict[str, Credit]: ...

    def count_audit(self, reflection_id: str, outcome: str, episode: str) -> bool:
        """Count one audited episode's outcome; False if that episode was counted before."""
        ...

    def merged_from(self, reflection_id: str) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


class Filtering(Protocol):
    """A store that declares FILTER: it searches, lists and recalls only the lessons whose
    metadata or provenance pass `filters` (`{"user": "alice"}`, `{"turn": {"$gte": 2}}`; see
    memory.chroma.rows.conditions)."""

    def search(
        self, text: str, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[Recalled]: ...

    def reflections(self, filters: Mapping[str, Any] | None = None) -> list[Reflection]: ...

    def recall(
        self, text: str, scope: RecallScope, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[Recalled]: ...
