"""Where a run folder's stores are (as its config.json says) and every store a backend finds
there, opened for a person through the Curated contract: to read, or to change, held against
other writers; and which of them holds a lesson (`holder`, or `changed` for one a history keeps).
The CLI and the web page open stores only through `opened`.

    >>> with opened(Path("runs/quad"), None, Access.EDIT) as stores:  # doctest: +SKIP
    ...     [store.kind for store in stores]
    ['chroma', 'window']
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

from memory.backend import DEFAULT_COLLECTION, DEFAULT_EMBEDDER, Access, StoreSettings
from memory.ranking import Ranking, parse_ranking
from memory.registry import BACKENDS, DEFAULT_BACKEND, open_store
from reflexion.core.curation import CREDIT, HISTORY, Credit, Curated
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.lesson_records import Reflection
from reflexion.core.protocols import Closable
from reflexion.core.runfolder import RunFolder
from reflexion.curate.kept import kept_export, kept_file, refused
from reflexion.curate.lessons import full_id


def check_has_memory(path: Path, url: str | None) -> None:
    """A run folder whose strategies keep no lessons has no store to open: say so, and name
    the strategies that would have made one (rather than "cannot open Chroma store")."""
    config = RunFolder(path).load_config() if path.is_dir() and url is None else None
    if config is None or (path / "memory").is_dir():  # a store of its own: some kept lessons
        return
    from reflexion.strategies import STRATEGIES

    ran = list(config.get("strategies", ()))
    known = [STRATEGIES[name] for name in ran if name in STRATEGIES]
    if len(known) == len(ran) and not any(s.memory is not None for s in known):
        keeping = ", ".join(n for n, s in STRATEGIES.items() if s.memory is not None)
        msg = (
            f"{path} has no memory: its strategies ({', '.join(ran)}) keep no lessons; "
            f"a run of {keeping} makes one"
        )
        raise UsageError(msg)


def settings_for(
    path: Path, url: str | None, create: bool = False, ranked: bool = True
) -> StoreSettings:
    """Where the stores of a run folder are (as its config.json says), or `path` as a store
    folder (`create`: one that need not exist yet, for `memory import`). `ranked`: with the
    run's recall ranking (for `memory why`); without it, the stores rank by the default."""
    config = RunFolder(path).load_config() if path.is_dir() else None
    embedder = str((config or {}).get("embedder") or DEFAULT_EMBEDDER)  # for the window's search
    rank = str((config or {}).get("rank") or "similarity")
    ranking = parse_ranking(rank) if ranked else Ranking()  # for `memory why`
    collection = str((config or {}).get("collection") or DEFAULT_COLLECTION)  # --collection
    if url:
        return StoreSettings(path, None, url, embedder, ranking, collection)
    if not path.exists() and not create:
        msg = f"{path} does not exist"
        raise UsageError(msg)
    if config is None:
        return StoreSettings(path, memory=str(path), embedder=embedder)
    if config.get("memory_mode") == "copy":  # the run's lessons are in its own copy
        return StoreSettings(path, embedder=embedder, ranking=ranking, collection=collection)
    memory, chroma_url = config.get("memory"), config.get("chroma_url")
    return StoreSettings(path, memory, chroma_url, embedder, ranking, collection)


def run_chroma_url(path: Path) -> str | None:
    """The Chroma server a run folder's lessons went to (its --chroma-url), if any."""
    config = RunFolder(path).load_config() if path.is_dir() else None
    url = (config or {}).get("chroma_url")
    copied = (config or {}).get("memory_mode") == "copy"  # its lessons are in OUT/memory
    return str(url) if url and not copied else None


@contextlib.contextmanager
def opened(
    path: Path, url: str | None, access: Access = Access.READ, ranked: bool = True
) -> Iterator[list[Curated]]:
    """Every store a backend finds for this run folder (or store folder), closed after the
    block; with Access.EDIT, each held against other writers meanwhile; `ranked` as for
    `settings_for`. A kept folder's export (reflexion.curate.kept) stands in for a store, to read
    only. StoreError when there is none."""
    url = url or run_chroma_url(path)
    check_has_memory(path, url)
    settings = settings_for(path, url, ranked=ranked)
    with contextlib.ExitStack() as held:
        found: list[Curated] = []
        for name in BACKENDS:
            store = open_store(dataclasses.replace(settings, backend=name), access)
            if isinstance(store, Closable):
                held.callback(store.close)
            if isinstance(store, Curated):  # a store of the run's contract only: none to show
                found.append(store)
        if not found and path.is_dir() and kept_file(path) is not None:
            if access is not Access.READ:
                raise StoreError(refused(path))
            found = [s for s in [kept_export(path)] if s is not None]
        if not found:
            raise StoreError(_none_found(path, settings))
        yield found


def _none_found(path: Path, settings: StoreSettings) -> str:
    """Why a run folder has no store to open: a memory object passed from Python that has no
    path to record, or where each backend looked."""
    config = RunFolder(path).load_config() if path.is_dir() else None
    backend = str((config or {}).get("memory_backend", ""))
    if backend.startswith("object:") and settings.memory is None and settings.chroma_url is None:
        name = backend.removeprefix("object:")
        return (
            f"no memory store for {path}: its lessons went to a memory object passed from "
            f"Python ({name}), which has no path or URL to record; `reflexion memory` reads a "
            "Chroma store (memory=ChromaMemory(PATH) records its path) or a run's window.jsonl"
        )
    looked = "; ".join(b.where(settings) for b in BACKENDS.values() if b.where)
    return f"no memory store for {path}: {looked}"


@contextlib.contextmanager
def importing(path: Path, url: str | None, embedder: str) -> Iterator[Curated]:
    """The store that `memory import` fills: the run's own (its --memory-backend), or a store
    folder at `path`, made with `embedder` when there is none."""
    url = url or run_chroma_url(path)
    config = RunFolder(path).load_config() if path.is_dir() else None
    name = str((config or {}).get("memory_backend") or DEFAULT_BACKEND)
    settings = settings_for(path, url, create=True)
    settings = dataclasses.replace(settings, backend=name if name in BACKENDS else DEFAULT_BACKEND)
    if config is None:  # a store folder: made with the embedder asked for
        settings = dataclasses.replace(settings, embedder=embedder)
    store = open_store(settings, Access.CREATE)
    try:
        if not isinstance(store, Curated):  # a store of the run's contract only
            msg = f"the {settings.backend} backend's store cannot be changed by a person"
            raise StoreError(msg)
        yield store
    finally:
        if isinstance(store, Closable):
            store.close()


def kept_by(stores: list[Curated], strategy: str, config: dict[str, object]) -> list[Curated]:
    """The stores a strategy of this run kept its lessons in (its backend's), or every store
    when that is not known (a strategy registered elsewhere, a memory object)."""
    from reflexion.strategies import RUN_MEMORY, STRATEGIES

    known = STRATEGIES.get(strategy)
    name = None if known is None else known.memory
    if name == RUN_MEMORY:
        name = str(config.get("memory_backend") or DEFAULT_BACKEND)
    mine = [store for store in stores if store.kind == name]
    return mine or stores


def credits_in(store: Curated) -> dict[str, Credit]:
    """Each lesson's credit, where the store keeps it (empty where it keeps none)."""
    return store.credits() if CREDIT in store.can else {}


def holder(stores: Sequence[Curated], rid: str, where: object) -> tuple[Curated, Reflection]:
    """The store that holds lesson `rid` (its id, or a prefix of one id alone) now, and the
    lesson; a UsageError when it names none, or several (see `full_id`)."""
    held = _held(stores, rid)
    if held is None:
        _check_not_forgotten(stores, rid, where)
        held = _held(stores, full_id(stores, rid, where))
    if held is None:  # full_id found the id among these stores' lessons
        raise AssertionError(rid)
    return held


def _check_not_forgotten(stores: Sequence[Curated], given: str, where: object) -> None:
    """A UsageError saying so when `given` (an id, or a prefix of one id alone) names a lesson
    that was forgotten and that a history keeps, rather than the closest ids held now."""
    now = {r.id for store in stores for r in store.lessons()}
    if any(rid.startswith(given) for rid in now):
        return
    kept = {rid for s in stores if HISTORY in s.can for rid in s.changed_ids()}
    gone = sorted(rid for rid in kept - now if rid.startswith(given))
    if given and len(gone) == 1:
        msg = (
            f"lesson {gone[0]} was forgotten from {where}: `reflexion memory history` shows what "
            "it was, and `reflexion memory revert` brings it back"
        )
        raise UsageError(msg)


def _held(stores: Sequence[Curated], rid: str) -> tuple[Curated, Reflection] | None:
    for store in stores:
        found = store.get(rid)
        if found is not None:
            return store, found
    return None


def changed(stores: Sequence[Curated], given: str, where: object) -> tuple[Curated, str]:
    """The store that holds lesson `given` (its id, or a prefix of one id alone) or kept it in
    its history, forgotten lessons included, and the full id; a UsageError as `full_id`'s."""
    store = with_history(stores, given)
    if store is None:
        kept = [rid for s in stores if HISTORY in s.can for rid in s.changed_ids()]
        given = full_id(stores, given, where, kept)
        store = with_history(stores, given)
    if store is None:  # full_id found it among these stores' lessons and histories
        raise AssertionError(given)
    return store, given


def with_history(stores: Sequence[Curated], rid: str) -> Curated | None:
    """The store that holds lesson `rid`, or else that kept it in its history."""
    for store in stores:
        if store.get(rid) is not None:
            return store
    for store in stores:
        if "history" in store.can and store.history(rid):
            return store
    return None
