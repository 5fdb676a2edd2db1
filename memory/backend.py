"""What a memory backend is: one store class serving two contracts, the run's (`Memory`:
recall, add) and the people's (`Curated`: list, forget, edit, revert, audit), as chroma's one
server object (`ServerAPI`) implements both of its thin clients' APIs (`Client`'s ClientAPI,
`AdminClient`'s AdminAPI); and one function that opens its store for the access wanted
(`Access`). The registry (memory.registry) maps names to backends.

    >>> from memory.window import WindowMemory
    >>> def open_mine(where, access):
    ...     return WindowMemory() if access is Access.RUN else None  # nothing left to find
    >>> mine = Backend("mine", "a list in this process", open_mine)
    >>> mine.open(StoreSettings(Path("runs/x")), Access.RUN).reflections()
    []
    >>> ReadOnly.can
    frozenset()
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memory.ranking import Ranking
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
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection
from reflexion.core.protocols import Closable, Memory

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
DEFAULT_COLLECTION = "reflections"  # where a Chroma store keeps a run's lessons (--collection)


class Access(enum.Enum):
    """What a store is opened for."""

    RUN = "run"  # the store a run recalls from and writes to, made where there is none
    READ = "read"  # the store a run left, to look at (None: there is none)
    EDIT = "edit"  # to change it, held against other writers meanwhile (None: there is none)
    CREATE = "create"  # as EDIT, made where there is none (`memory import` into a new folder)


@dataclass(frozen=True)
class StoreSettings:
    """Where a store is: its backend, and everything that backend may need to open it."""

    folder: Path  # the run folder
    memory: str | None = None  # a store folder shared across runs (default: in the run folder)
    chroma_url: str | None = None  # a Chroma server instead of a folder
    embedder: str = DEFAULT_EMBEDDER
    ranking: Ranking = Ranking()  # how a vector store ranks what a scope admits
    collection: str = DEFAULT_COLLECTION  # the lessons' collection in a Chroma store
    backend: str = "chroma"  # the backend's name (--memory-backend)


def collection_name(text: str) -> str:
    """A Chroma collection name as Chroma accepts it (a ValueError saying what is expected):
    3-512 characters of letters, digits, '.', '_' and '-', a letter or digit at each end.

    >>> collection_name("team-a.lessons")
    'team-a.lessons'
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]", text) or ".." in text:
        msg = (
            f"expected a collection name of 3-512 letters, digits, '.', '_' or '-', starting "
            f"and ending with a letter or digit, got {text!r}"
        )
        raise ValueError(msg)
    return text


def close_all(memories: Sequence[Memory]) -> None:
    """Let go of the stores that hold a file or a connection (the others need nothing)."""
    for memory in memories:
        if isinstance(memory, Closable):
            memory.close()


Opener = Callable[[StoreSettings, Access], Memory | None]


@dataclass(frozen=True)
class Backend:
    """A memory backend. `open(where, access)` opens its store: for a run (made where there is
    none), to read, or to change; None when there is none to read or change. A store that also
    serves the people's contract (reflexion.core.curation.Curated; the ReadOnly mixin is enough
    to be listed) is what `reflexion memory` and the web page show. `files` are the files it
    writes in the run folder (checked for write access before a run starts; a backend that is
    not `shared` is asked to read or change a run folder's store only when one of them is there:
    memory.registry.open_store); `where` says where it looks, for a message."""

    name: str
    help: str
    open: Opener
    files: tuple[str, ...] = ()
    shared: bool = False  # its store can be one shared across runs (--memory, --chroma-url)
    where: Callable[[StoreSettings], str] | None = None


class _Stored(Protocol):
    kind: str

    def reflections(self) -> list[Reflection]: ...

    def recall(self, text: str, scope: RecallScope, k: int) -> list[Recalled]: ...


class ReadOnly:
    """The people's contract for reading, every change declined (CannotCurate): a store class
    mixes it in and overrides what it can do, adding it to `can`. The store names its `kind`
    (its backend's name), `location` and `label`."""

    can: frozenset[str] = frozenset()

    def lessons(self: _Stored, chosen: Chosen = EVERY) -> list[Reflection]:
        return [r for r in self.reflections() if chosen.admits(r)]

    def ranked(self: _Stored, text: str, scope: RecallScope, at: float) -> list[Recalled]:
        every = len(self.reflections())
        hits = self.recall(text, scope, every) if every else []
        return [h for h in hits if h.reflection.created <= at]

    def forget(self: _Stored, ids: Sequence[str], why: str) -> int:
        raise CannotCurate(self.kind, FORGET)

    def edit(self: _Stored, reflection_id: str, text: str, why: str) -> Reflection:
        raise CannotCurate(self.kind, EDIT)

    def revert(
        self: _Stored, reflection_id: str, why: str, to: int | None = None
    ) -> Reflection | None:
        raise CannotCurate(self.kind, REVERT)

    def bring_in(self: _Stored, reflections: Sequence[Reflection], why: str) -> int:
        raise CannotCurate(self.kind, IMPORT)

    def history(self: _Stored, reflection_id: str) -> list[Change]:
        raise CannotCurate(self.kind, HISTORY)

    def changed_ids(self: _Stored) -> list[str]:
        return []  # it keeps no history

    def credits(self: _Stored) -> dict[str, Credit]:
        raise CannotCurate(self.kind, CREDIT)

    def count_audit(self: _Stored, reflection_id: str, outcome: str, episode: str) -> bool:
        raise CannotCurate(self.kind, CREDIT)

    def merged_from(self, reflection_id: str) -> list[dict[str, Any]]:
        return []  # it merges no lessons
