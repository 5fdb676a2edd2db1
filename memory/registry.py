"""Memory backends by name, chosen with `--memory-backend`, independently of the strategy.

Adding a backend is one module (a class with the Memory protocol's methods) plus one entry:

    >>> from memory.window import WindowMemory
    >>> register_backend(Backend("scratch", "a list, gone at exit", lambda s: WindowMemory()))
    >>> sorted(backend_names())
    ['chroma', 'scratch', 'window']
    >>> del BACKENDS["scratch"]
"""

from __future__ import annotations

from memory.backend import Backend
from memory.chroma.backend import CHROMA
from memory.window_backend import WINDOW
from reflexion.core.errors import UsageError

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
