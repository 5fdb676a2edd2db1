"""What a memory backend is: how to open its store for a run, how to find the store a run left
behind, and how to open that store for a person to curate (`reflexion memory`, the web page):
`readable` to look, `writable` to change it, held against other writers. The registry
(memory.registry) maps names to backends.

    >>> from memory.window import WindowMemory
    >>> mine = Backend("mine", "a list in this process", open=lambda settings: WindowMemory(),
    ...                find=lambda settings: WindowMemory())
    >>> mine.open(StoreSettings(Path("runs/x"))).reflections()
    []
    >>> with mine.readable(StoreSettings(Path("runs/x"))) as store:
    ...     store.lessons(), sorted(store.can)
    ([], [])
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memory.listed import ListedCuration
from memory.ranking import Ranking
from reflexion.core.curation import Curated
from reflexion.core.errors import StoreError
from reflexion.core.protocols import Closable, Memory

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
DEFAULT_COLLECTION = "reflections"  # where a Chroma store keeps a run's lessons (--collection)
# how a person opens a store: to read it, to change it (held against other writers), or to
# change it or make it when there is none (`memory import` into a new folder)
Access = Literal["read", "write", "create"]


@dataclass(frozen=True)
class StoreSettings:
    """Where a run keeps its memory: everything a backend may need to open it."""

    folder: Path  # the run folder
    memory: str | None = None  # a store folder shared across runs (default: in the run folder)
    chroma_url: str | None = None  # a Chroma server instead of a folder
    embedder: str = DEFAULT_EMBEDDER
    ranking: Ranking = Ranking()  # how a vector store ranks what a scope admits
    collection: str = DEFAULT_COLLECTION  # the lessons' collection in a Chroma store


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


def _nothing(settings: StoreSettings) -> Memory | None:
    return None


def close_all(memories: Sequence[Memory]) -> None:
    """Let go of the stores that hold a file or a connection (the others need nothing)."""
    for memory in memories:
        if isinstance(memory, Closable):
            memory.close()


@dataclass(frozen=True)
class Backend:
    """A memory backend. `open` makes (or reopens) the store a run writes; `find` opens the
    store a finished run left, or returns None when there is none; `files` are the files it
    writes in the run folder (checked for write access before a run starts)."""

    name: str
    help: str
    open: Callable[[StoreSettings], Memory]
    find: Callable[[StoreSettings], Memory | None] = _nothing
    files: tuple[str, ...] = ()
    shared: bool = False  # its store can be one shared across runs (--memory, --chroma-url)
    where: Callable[[StoreSettings], str] | None = None  # where `find` looks, for a message
    # the store opened for a person (None: there is none); default: `find`, read-only
    curate: Callable[[StoreSettings, Access], AbstractContextManager[Curated | None]] | None = None

    def readable(self, settings: StoreSettings) -> AbstractContextManager[Curated | None]:
        """The store a run left, to look at (None: there is none); closed after the block."""
        return self.curated(settings, "read")

    @contextlib.contextmanager
    def writable(self, settings: StoreSettings, create: bool = False) -> Iterator[Curated]:
        """The store, held against other writers while the block runs (a run on it waits, and
        says so); `create` makes one where there is none. StoreError when there is none.

            >>> with CHROMA.writable(settings) as store:               # doctest: +SKIP
            ...     store.forget(["3f9a0c1d2e4b5a69"], why="misleading")
        """
        with self.curated(settings, "create" if create else "write") as store:
            if store is None:
                where = self.where(settings) if self.where else str(settings.folder)
                msg = f"no {self.name} store to change: {where}"
                raise StoreError(msg)
            yield store

    def curated(
        self, settings: StoreSettings, access: Access
    ) -> AbstractContextManager[Curated | None]:
        """The store for a person, opened for `access` (None: there is none)."""
        if self.curate is not None:
            return self.curate(settings, access)
        return _listed(self, settings)


@contextlib.contextmanager
def _listed(backend: Backend, settings: StoreSettings) -> Iterator[Curated | None]:
    memory = backend.find(settings)
    try:
        yield None if memory is None else ListedCuration(memory, backend.name)
    finally:
        close_all([memory] if memory is not None else [])
