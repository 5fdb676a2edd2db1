"""Opening a Chroma store: an embedded folder or a `chroma run` server, with errors a user can act
on instead of what PersistentClient would do (create a store anywhere, or raise a traceback).

    >>> split_url("http://127.0.0.1:8000")
    ('127.0.0.1', 8000, False)

An embedded store is held by one process at a time (StoreLock, a `flock` beside the store's
folder): Chroma's embedded store caches index state in each process and is not safe for two
writing processes at once, so a second run on the same `--memory DIR` waits its turn (and says
so). Its writers of one collection share one task cache (CacheHold, memory.chroma.tasks). Both
are counted in a `Holders` registry and let go with their last holder, on close or when a memory
nobody closed is collected. The collector may run a finalizer on any thread, at any allocation,
a thread already inside the registry included: letting go never waits for the registry's lock on
the thread that holds it.

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
import time
import weakref
from collections.abc import Callable, Hashable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from reflexion.core.errors import StoreError, UsageError

if TYPE_CHECKING:
    from chromadb.api.client import Client
    from chromadb.api.models.Collection import Collection

    from memory.backend import StoreSettings
    from memory.chroma.tasks import TaskCache
    from reflexion.core.protocols import Embedder

SQLITE_FILE = "chroma.sqlite3"


def connect(chromadb: Any, path: Path | None, url: str | None, create: bool) -> Client:
    """A Chroma client: a server's when `url` is set, else an embedded one on `path`.

    >>> import chromadb  # doctest: +SKIP
    >>> connect(chromadb, Path("runs/memory"), None, create=True).heartbeat()  # doctest: +SKIP
    1763830000000000000
    """
    # Telemetry off: runs are offline, and a research tool should not phone home.
    settings = chromadb.config.Settings(anonymized_telemetry=False)
    if url is not None:
        host, port, ssl = split_url(url)
        client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
    else:
        assert path is not None
        check_dir(path, create)
        client = chromadb.PersistentClient(path=str(path), settings=settings)
    return cast("Client", client)


def release(client: Client) -> None:
    """Close a client. chromadb stops a client's system (and its internal admin client's) on
    `close()`, but a server client's HTTP sessions stay open and their sockets warn at exit;
    a server client shares no system with another one, so its sessions are closed here too."""
    admin = getattr(client, "_admin_client", None)
    servers = [getattr(c, "_server", None) for c in (client, admin)]
    client.close()
    for server in servers:
        session = getattr(server, "_session", None)
        if session is not None and hasattr(session, "close"):
            session.close()


def open_collection(client: Client, name: str, embedder: Embedder, create: bool) -> Collection:
    """The collection `name`; with `create`, made if missing, for `embedder`'s cosine vectors."""
    if not create:
        return client.get_collection(name, embedding_function=None)
    # Metadata and configuration apply only when the collection is new; an existing one keeps
    # its own, which check_model compares with ours.
    return client.get_or_create_collection(
        name,
        embedding_function=None,
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"embedding_model": embedder.name, "embedding_dim": embedder.dim},
    )


class Retrying:
    """A collection whose calls are tried again, after a short pause, when Chroma answers with an
    internal error: two runs writing to one `chroma run` server once ended a run with "Error
    executing plan: Internal error: Error finding id". The store's calls are all safe to repeat
    (reads, and upserts, updates and deletes by id); an error that persists is raised."""

    TRIES = 3

    def __init__(self, collection: Collection, pause: float = 0.2) -> None:
        self._collection, self._pause = collection, pause

    def __getattr__(self, name: str) -> Any:
        import chromadb.errors

        found = getattr(self._collection, name)
        if not callable(found):
            return found

        def again(*args: Any, **kwargs: Any) -> Any:
            for n in range(self.TRIES - 1):
                try:
                    return found(*args, **kwargs)
                except chromadb.errors.InternalError:
                    time.sleep(self._pause * 2**n)
            return found(*args, **kwargs)  # the last try: its error is raised

        return again


def stored_model(collection: Collection, location: str) -> str:
    """The embedding model a collection was made with (recorded in its metadata)."""
    model = (collection.metadata or {}).get("embedding_model")
    if not isinstance(model, str):
        msg = (
            f"collection {collection.name!r} at {location} records no embedding_model: "
            "it was not made by reflexion-memory"
        )
        raise StoreError(msg)
    return model


def check_model(collection: Collection, embedder: Embedder, location: str) -> None:
    """Refuse a store made with another embedding model: its vectors would not compare."""
    model = stored_model(collection, location)
    dim = (collection.metadata or {}).get("embedding_dim")
    if model != embedder.name or dim != embedder.dim:
        msg = (
            f"collection {collection.name!r} at {location} was made with embedding model "
            f"{model} ({dim}-d), not {embedder.name} ({embedder.dim}-d); open it with {model} "
            "or use another store"
        )
        raise StoreError(msg)


def store_path(where: StoreSettings) -> Path | None:
    """The store's folder (None: it is on a server)."""
    if where.chroma_url:
        return None
    return Path(where.memory) if where.memory else where.folder / "memory"


def where_missing(where: StoreSettings) -> str:
    """Where a store was looked for, for the message that says none is there."""
    path = store_path(where)
    return f"no {SQLITE_FILE} in {path}" if path is not None else f"{where.chroma_url}"


def check_dir(path: Path, create: bool) -> None:
    """Refuse what PersistentClient would silently turn into a store: a file, a folder of other
    things, or (with `create=False`) a folder that holds no store.

        >>> check_dir(Path("/nowhere"), create=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        reflexion.core.errors.StoreError: cannot open Chroma store at /nowhere: no ...
    """
    if (path / SQLITE_FILE).is_file():
        return
    if path.exists() and not path.is_dir():
        why = "not a directory"
    elif not create:
        why = f"no {SQLITE_FILE} there"
    elif path.exists() and any(path.iterdir()):
        why = f"the directory holds other files but no {SQLITE_FILE}"
    else:
        return
    msg = f"cannot open Chroma store at {path}: {why}"
    raise StoreError(msg)


def split_url(url: str) -> tuple[str, int, bool]:
    """(host, port, ssl) from "http://host:port"; the port defaults to 8000, as `chroma run`'s.

    >>> split_url("https://memory.example.org")
    ('memory.example.org', 8000, True)
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        msg = f"bad Chroma server url {url!r}: expected http://HOST:PORT"
        raise UsageError(msg)
    try:
        port = parts.port or 8000
    except ValueError as e:
        msg = f"bad Chroma server url {url!r}: {e}"
        raise UsageError(msg) from e
    return parts.hostname, port, parts.scheme == "https"


def one_line(e: BaseException) -> str:
    """An exception's message on one short line, for a StoreError.

    >>> one_line(ValueError("no\\n  such   table"))
    'no such table'
    """
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 300 else text[:297] + "..."


class Unresolved:
    """Stands in for the embedder while `ChromaMemory.open` reads which model made the store."""

    name = "(unresolved)"
    dim = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        msg = "ChromaMemory.open resolves the embedder before any call"
        raise AssertionError(msg)


class Holders:
    """Objects made once per key and shared, each with a count of its holders; `close` is
    called on one when its last holder lets go."""

    def __init__(self, close: Callable[[Any], object] = lambda held: None) -> None:
        self._held: dict[Hashable, list[Any]] = {}  # key -> [object, holders]
        # re-entrant: the collector may run a holder's finalizer on the thread inside, at any
        # allocation (the lock's own release included), and that let_go must not wait on itself
        self._lock = threading.RLock()
        self._depth = 0  # how deep the thread inside has entered
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
        """One holder of `key` lets go. Counted as the outermost entry leaves, so a finalizer
        run in the middle of `take` cannot close what `take` is about to hand out."""
        self._gone.append(key)
        with self._inside():
            pass  # leaving counts it

    @contextlib.contextmanager
    def _inside(self) -> Iterator[None]:
        with self._lock:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._count_gone()

    def _count_gone(self) -> None:
        self._depth = 1  # a let_go run meanwhile (by the collector, in `close`) only queues
        try:
            while self._gone:
                key = self._gone.popleft()
                held = self._held[key]
                held[1] -= 1
                if held[1] == 0:
                    del self._held[key]
                    self._close(held[0])
        finally:
            self._depth = 0


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
