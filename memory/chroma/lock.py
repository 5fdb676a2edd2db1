"""One process at a time on an embedded Chroma store: a `flock` beside the store's folder.

Chroma's embedded store caches index state in each process and is not safe for two writing
processes at once, so a second run on the same `--memory DIR` waits its turn (and says so).

    >>> lock = StoreLock(Path(tempfile.mkdtemp()) / "memory")
    >>> lock.close()
"""

from __future__ import annotations

import fcntl
import sys
import threading
import weakref
from pathlib import Path
from typing import IO, Any

_HELD: dict[Path, list[Any]] = {}  # store path -> [lock file, holders] in this process
_HELD_LOCK = threading.Lock()


class StoreLock:
    """This process's hold on an embedded store (shared by its ChromaMemory objects: a second
    flock from the same process would wait on itself)."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        with _HELD_LOCK:
            held = _HELD.get(self.path)
            if held is None:
                held = _HELD[self.path] = [_take_store(self.path), 0]
            held[1] += 1
        # let go once: on close, when a memory nobody closed is collected, or at exit
        self._let_go = weakref.finalize(self, _let_go, self.path)

    def close(self) -> None:
        self._let_go()


def _let_go(path: Path) -> None:
    with _HELD_LOCK:
        held = _HELD[path]
        held[1] -= 1
        if held[1] == 0:
            held[0].close()  # closing the file releases the flock
            del _HELD[path]


def _take_store(path: Path) -> IO[str]:
    """Take the store for this process. Chroma's embedded store caches index state in each
    process and is not safe for two writing processes at once (a second writer fails with
    "Error finding id", or loses records), so a second run on the same `--memory DIR` waits its
    turn; runs that must write concurrently share a `chroma run` server (`--chroma-url`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = (path.parent / f".{path.name}.lock").open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            f"reflexion: memory store {path} is in use by another run; waiting for it "
            "(use --chroma-url to share a store between concurrent runs)",
            file=sys.stderr,
        )
        fcntl.flock(handle, fcntl.LOCK_EX)
    return handle
