"""Where a ReflexionMemory keeps its lessons, found the way `reflexion memory` and `reflexion serve`
find a run's: a folder of its own (laid out as a run folder: `config.json`, `trace.jsonl`, the
Chroma store in `memory/`), a run folder of `compare`, a Chroma store folder (`--memory DIR`), or
a Chroma server.

Only a folder of its own gets the agent's trace (its recalls and outcomes, for `memory show` and
`memory why`); a run's trace belongs to its trials, and a store folder has none.

    >>> where = agent_place(Path("my-agent"), None, None, None, "my-agent", True)  # doctest: +SKIP
    >>> where.settings.folder, where.traced                                     # doctest: +SKIP
    (PosixPath('my-agent'), True)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory import Access, StoreSettings, open_store
from memory.backend import DEFAULT_COLLECTION, DEFAULT_EMBEDDER
from reflexion.core.errors import UsageError
from reflexion.core.protocols import Closable
from reflexion.core.runfolder import RunFolder
from reflexion.core.version import VERSION
from reflexion.curate.stores import settings_for

AGENT = "reflexion.ReflexionMemory"  # config.json's "agent": a folder this class made
RANK = "task=0.25,recency=0.2"  # the chroma store's default ranking (memory.ranking.Ranking)


@dataclass(frozen=True)
class Place:
    """Where the store is, and whether this folder's trace is the agent's to write."""

    settings: StoreSettings
    traced: bool


def agent_place(
    path: Path | None,
    url: str | None,
    collection: str | None,
    embedder: str | None,
    strategy: str,
    create: bool,
) -> Place:
    """The store at `path` (or on the server at `url`) for the lessons of `strategy`;
    `collection` and `embedder` None: as the folder records them, else the defaults. A
    UsageError for a path that holds no store (with `create`, only a new or empty folder is made
    into one)."""
    if path is None:
        if url is None:
            msg = "ReflexionMemory needs a folder or a Chroma server (url=...)"
            raise UsageError(msg)
        return Place(_settings(Path.cwd(), None, url, collection, embedder), traced=False)
    if path.exists() and not path.is_dir():
        msg = f"{path} is not a folder"
        raise UsageError(msg)
    config = RunFolder(path).load_config() if path.is_dir() else None
    if config is not None:  # this class's folder, or a run of `compare`
        _check_same(path, config, url, collection, embedder)
        ours = config.get("agent") == AGENT
        if ours and strategy not in config.get("strategies", []):  # as `memory list` names it
            config["strategies"] = [*config.get("strategies", []), strategy]
            RunFolder(path).save_config(config)
        return Place(settings_for(path, url), traced=ours)
    if path.is_dir() and any(path.iterdir()):
        return Place(_store_folder(path, url, collection, embedder), traced=False)
    if not create:
        msg = f"no memory at {path}: it {'is empty' if path.exists() else 'does not exist'}"
        raise UsageError(msg)
    return Place(_new_folder(path, url, collection, embedder, strategy), traced=True)


def _settings(
    folder: Path, memory: str | None, url: str | None, collection: str | None, embedder: str | None
) -> StoreSettings:
    return StoreSettings(
        folder,
        memory=memory,
        chroma_url=url,
        embedder=embedder or DEFAULT_EMBEDDER,
        collection=collection or DEFAULT_COLLECTION,
    )


def _store_folder(
    path: Path, url: str | None, collection: str | None, embedder: str | None
) -> StoreSettings:
    """A folder of other files is a Chroma store folder, or no place for lessons."""
    settings = _settings(path, str(path), url, collection, embedder)
    found = open_store(settings, Access.READ)
    if found is None:
        msg = (
            f"{path} holds other files and no memory: name a new folder, a run folder or a "
            "Chroma store folder"
        )
        raise UsageError(msg)
    if isinstance(found, Closable):
        found.close()
    return settings


def _new_folder(
    path: Path, url: str | None, collection: str | None, embedder: str | None, strategy: str
) -> StoreSettings:
    """Make `path` a folder of this class's, with a config.json that `reflexion memory` and
    `reflexion serve` read as a run's."""
    settings = _settings(path, None, url, collection, embedder)
    RunFolder(path).save_config(
        {
            "agent": AGENT,
            "strategies": [strategy],  # the names its lessons record, as a run's
            "memory_backend": "chroma",
            "memory": None,
            "chroma_url": url,
            "collection": settings.collection,
            "embedder": settings.embedder,
            "rank": RANK,
            "created": time.time(),
            "version": VERSION,
        }
    )
    return settings


def _check_same(
    path: Path,
    config: Mapping[str, Any],
    url: str | None,
    collection: str | None,
    embedder: str | None,
) -> None:
    """A folder keeps its lessons where its config.json says: naming another place is an error."""
    asked = {"chroma_url": url, "collection": collection, "embedder": embedder}
    recorded = {"collection": DEFAULT_COLLECTION, "embedder": DEFAULT_EMBEDDER} | {
        key: config[key] for key in asked if config.get(key) is not None
    }
    differ = [
        f"{key} {recorded.get(key)!r}"
        for key, value in asked.items()
        if value is not None and value != recorded.get(key)
    ]
    if differ:
        msg = f"{path} records {', '.join(differ)}: open it with those, or name another folder"
        raise UsageError(msg)


def last_episodes(folder: Path, strategy: str, seed: int) -> dict[str, int]:
    """Each task's last episode in the folder's trace, for `strategy` and `seed`: a later
    session numbers its attempts on from there, so `memory why FOLDER TASK N` names one."""
    last: dict[str, int] = {}
    for step in RunFolder(folder).steps() if (folder / "trace.jsonl").exists() else []:
        if step.strategy == strategy and step.seed == seed:
            last[step.task_id] = max(last.get(step.task_id, 0), step.episode)
    return last
