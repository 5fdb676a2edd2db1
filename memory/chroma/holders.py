"""What this process holds of an embedded store, shared by all its ChromaMemory objects on it.

An embedded store is held by one process at a time (StoreLock, a `flock` beside the store's
folder): Chroma's embedded store caches index state in each process and is not safe for two
writing processes at once, so a second run on the same `--memory DIR` waits its turn (and says
so). Its writers of one collection share one task cache (CacheHold, memory.chroma.tasks).

Both are counted in a `Holders` registry and let go with their last holder, on close or when a
memory nobody closed is collected. The collector may run a finalizer on any thread, at any
allocation, a thread already inside the registry included: letting go never waits for the
registry's lock on the thread that holds it.

    >>> closed = []
    >>> files = Holders(closed.append)
    >>> files.take("a", lambda: "file a"), files.take("a", lambda: "never made")
    ('file a', 'file a')
    >>> files.let_go("a"); closed
    []
    >>> files.let_go("a"); closed
    ['file a']
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import sys
import threading
import weakref
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from memory.chroma.tasks import TaskCache


class Holders:
    """Objects made once per key and shared, each with a count of its holders; `close` is
    called on one when its last holder lets go."""

    def __init__(self, close: Callable[[Any], object] = lambda held: None) -> None:
        self._held: dict[Hashable, list[Any]] = {}  # key -> [object, holders]
        self._lock = threading.Lock()
        self._owner: int | None = None  # the thread inside, if any
        self._gone: collections.deque[Hashable] = collections.deque()  # let go, not yet counted
        self._close = close

    def take(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The object kept for `key` (made by `make` for its first holder), held once more."""
        with self._inside():
            held = self._held.get(key)
            if held is None:
                held = self._held[key] = [make(), 0]
            held[1] += 1
            return held[0]

    def get(self, key: Hashable) -> Any | None:
        """The object kept for `key`, if anybody holds it; not held by this call."""
        with self._inside():
            held = self._held.get(key)
        return None if held is None else held[0]

    def let_go(self, key: Hashable) -> None:
        """One holder of `key` lets go. On the thread inside the registry (a finalizer run by
        the collector there) it is counted when that thread leaves, not waited for."""
        self._gone.append(key)
        if self._owner != threading.get_ident():
            with self._inside():
                pass  # leaving counts it

    @contextlib.contextmanager
    def _inside(self) -> Iterator[None]:
        with self._lock:
            self._owner = threading.get_ident()
            try:
                yield
            finally:
                self._count_gone()
                self._owner = None

    def _count_gone(self) -> None:
        while self._gone:
            key = self._gone.popleft()
            held = self._held[key]
            held[1] -= 1
            if held[1] == 0:
                del self._held[key]
                self._close(held[0])


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


_STORES = Holders(lambda handle: handle.close())  # store path -> its lock file: closing it unlocks
_CACHES = Holders()  # (store path, collection) -> the TaskCache its writers share


class StoreLock:
    """This process's hold on an embedded store (shared by its ChromaMemory objects: a second
    flock from the same process would wait on itself)."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        _STORES.take(self.path, lambda: _take_store(self.path))
        # let go once: on close, when a memory nobody closed is collected, or at exit
        self._let_go = weakref.finalize(self, _STORES.let_go, self.path)

    def close(self) -> None:
        self._let_go()


class CacheHold:
    """A writer's hold on the task cache (memory.chroma.tasks.TaskCache, made by `make` for
    the first writer) of one collection in an embedded folder, shared with the process's other
    writers of it, as StoreLock is; let go on close or when the writer is collected."""

    def __init__(self, path: Path, collection: str, make: Callable[[], TaskCache]) -> None:
        key = (path.resolve(), collection)
        self.cache: TaskCache = _CACHES.take(key, make)
        self._let_go = weakref.finalize(self, _CACHES.let_go, key)

    def close(self) -> None:
        self._let_go()


def shared_cache(path: Path | None, collection: str) -> TaskCache | None:
    """The cache this process's writers keep of a collection, if any: a write through any
    ChromaMemory on the folder must update it."""
    if path is None:
        return None
    return cast("TaskCache | None", _CACHES.get((path.resolve(), collection)))
