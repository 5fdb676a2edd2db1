"""What a memory backend is: how to open its store for a run, and how to find the store a run
left behind (for `reflexion memory`). The registry (memory.registry) maps names to backends.

    >>> from memory.window import WindowMemory
    >>> mine = Backend("mine", "a list in this process", open=lambda settings: WindowMemory())
    >>> mine.open(StoreSettings(Path("runs/x"))).reflections()
    []
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memory.ranking import Ranking
from reflexion.core.protocols import Closable, Memory

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class StoreSettings:
    """Where a run keeps its memory: everything a backend may need to open it."""

    folder: Path  # the run folder
    memory: str | None = None  # a store folder shared across runs (default: in the run folder)
    chroma_url: str | None = None  # a Chroma server instead of a folder
    embedder: str = DEFAULT_EMBEDDER
    ranking: Ranking = Ranking()  # how a vector store ranks what a scope admits


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
