"""Memory backends by name, chosen with `--memory-backend`, independently of the strategy, and the
one way to open a store: `open_store(where, access)`.

Adding a backend is one store class (with the Memory protocol's methods) plus one entry:

    >>> from pathlib import Path
    >>> from memory.window import WindowMemory
    >>> register_backend(Backend("scratch", "a list, gone at exit", lambda where, access:
    ...                          WindowMemory() if access is Access.RUN else None))
    >>> sorted(backend_names())
    ['chroma', 'scratch', 'window']
    >>> open_store(StoreSettings(Path("runs/x"), backend="scratch"), Access.READ) is None
    True
    >>> del BACKENDS["scratch"]
"""

from __future__ import annotations

from typing import Literal, overload

from memory.backend import Access, Backend, StoreSettings
from memory.chroma import CHROMA
from memory.window import WINDOW
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.protocols import Memory

BACKENDS: dict[str, Backend] = {b.name: b for b in (CHROMA, WINDOW)}
DEFAULT_BACKEND = CHROMA.name


def register_backend(backend: Backend) -> None:
    """Make `--memory-backend NAME` (and `RunConfig(memory_backend=NAME)`) use `backend`."""
    BACKENDS[backend.name] = backend


def backend_names() -> list[str]:
    return list(BACKENDS)


def get_backend(name: str) -> Backend:
    """The backend called `name`; an unknown name is a UsageError that lists the known ones."""
    if name not in BACKENDS:
        msg = f"unknown memory backend {name!r}; known: {', '.join(BACKENDS)}"
        raise UsageError(msg)
    return BACKENDS[name]


@overload
def open_store(where: StoreSettings, access: Literal[Access.RUN]) -> Memory: ...


@overload
def open_store(where: StoreSettings, access: Access) -> Memory | None: ...


def open_store(where: StoreSettings, access: Access) -> Memory | None:
    """The store of backend `where.backend` at `where`, opened for `access`: for a run (made
    where there is none), to read, or to change (held against other writers until closed).
    None when there is none to read or change; close it when done.

        >>> store = open_store(settings, Access.EDIT)                # doctest: +SKIP
        >>> store.forget(["3f9a0c1d2e4b5a69"], why="misleading")    # doctest: +SKIP
        1
        >>> store.close()                                           # doctest: +SKIP
    """
    backend = get_backend(where.backend)
    if access in (Access.READ, Access.EDIT) and not _has_files(backend, where):
        return None  # nothing of it in the run folder: no store to ask
    store = backend.open(where, access)
    if store is None and access in (Access.RUN, Access.CREATE):  # it was to make one
        place = backend.where(where) if backend.where else str(where.folder)
        msg = f"no {backend.name} store to change: {place}"
        raise StoreError(msg)
    return store


def _has_files(backend: Backend, where: StoreSettings) -> bool:
    """Whether the run folder may hold `backend`'s store: a store that is only ever in the run
    folder (not `shared`, with its `files` named) is there when one of its files is."""
    if backend.shared or not backend.files:
        return True
    return any((where.folder / name).exists() for name in backend.files)
