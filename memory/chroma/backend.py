"""The `chroma` memory backend (the default): a Chroma store in the run folder (`OUT/memory`), in a
folder shared across runs (`--memory DIR`), or on a server (`--chroma-url`).

    >>> CHROMA.files
    ()
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from memory.backend import Access, Backend, StoreSettings
from memory.chroma.connect import SQLITE_FILE
from memory.chroma.curation import ChromaCuration
from memory.chroma.lock import StoreLock
from memory.chroma.store import ChromaMemory
from memory.embedders import embedder_for
from reflexion.core.curation import Curated


def store_path(settings: StoreSettings) -> Path | None:
    """The store's folder (None: it is on a server)."""
    if settings.chroma_url:
        return None
    return Path(settings.memory) if settings.memory else settings.folder / "memory"


def open_store(settings: StoreSettings) -> ChromaMemory:
    embedder = embedder_for(settings.embedder)
    memory = ChromaMemory(
        store_path(settings),
        url=settings.chroma_url,
        embedder=embedder,
        collection=settings.collection,
        ranking=settings.ranking,
    )
    embedder.embed(["warm-up"])  # load the model now, not inside the first trial's timing
    return memory


def find_store(settings: StoreSettings) -> ChromaMemory | None:
    """The store a run left, with the embedder it was made with; None when there is none."""
    path = store_path(settings)
    if path is not None and not (path / SQLITE_FILE).exists():
        return None
    return ChromaMemory.open(path, url=settings.chroma_url, collection=settings.collection)


def where(settings: StoreSettings) -> str:
    path = store_path(settings)
    return f"no {SQLITE_FILE} in {path}" if path is not None else f"{settings.chroma_url}"


@contextlib.contextmanager
def curate(settings: StoreSettings, access: Access) -> Iterator[Curated | None]:
    """The store for a person, ranked as the run ranked it; to change it, held against other
    processes (a run on the same folder waits its turn)."""
    path = store_path(settings)
    exists = path is None or (path / SQLITE_FILE).exists()
    if not exists and access != "create":
        yield None
        return
    lock = StoreLock(path) if path is not None and access != "read" else None
    try:
        if exists:
            memory = ChromaMemory.open(
                path, url=settings.chroma_url, collection=settings.collection
            )
        else:
            embedder = embedder_for(settings.embedder)
            memory = ChromaMemory(path, embedder=embedder, collection=settings.collection)
        with ChromaCuration(memory, settings.ranking) as store:
            yield store
    finally:
        if lock is not None:
            lock.close()


CHROMA = Backend(
    "chroma",
    "a Chroma vector store, ranked by similarity, the task's own lessons and recency (--rank)",
    open=open_store,
    find=find_store,
    where=where,
    shared=True,
    curate=curate,
)
