"""The stores a run keeps its lessons in: the memory backend of each strategy that keeps lessons
(the run's --memory-backend, or one the strategy always uses), one store per backend shared by
the strategies that use it, or the memory object a Python caller passed (`memory=`), whose
place config.json records so that `reflexion memory` finds it.

    >>> from reflexion.strategies import parse_strategies
    >>> config = RunConfig(env="quadratic", memory_backend="window")
    >>> backends_of(config, parse_strategies("single,reflexion,reflexion-window"), None)
    {'reflexion': 'window', 'reflexion-window': 'window'}
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory.backend import Access, StoreSettings, close_all
from memory.copying import open_copy
from memory.registry import get_backend, open_store
from reflexion.core.errors import UsageError
from reflexion.core.protocols import Memory
from reflexion.runner.config import RunConfig
from reflexion.runner.parsers import Parsed
from reflexion.strategies import RUN_MEMORY, Strategy


def check_memory_use(strategies: Sequence[Strategy], memory: Memory | None) -> None:
    """A memory object is for the strategies that keep lessons in the run's memory; passing one
    to a run that has none would be silently ignored."""
    if memory is not None and not any(s.memory == RUN_MEMORY for s in strategies):
        names = ", ".join(s.name for s in strategies)
        msg = (
            f"memory= is used by strategies that keep lessons in the run's memory (reflexion); "
            f"none of {names} does"
        )
        raise UsageError(msg)


def store_of(memory: Memory, config: RunConfig) -> dict[str, Any]:
    """Where a Chroma store passed as an object is (its folder or server, and collection), for
    config.json: so `reflexion memory` finds it from the run folder, and a resume with another
    store is refused. A store of another kind records none (`memory` then says so)."""
    if getattr(memory, "kind", None) != "chroma" or config.memory or config.chroma_url:
        return {}
    path, url = getattr(memory, "path", None), getattr(memory, "url", None)
    where = {"memory": str(path)} if path is not None else {"chroma_url": str(url)}
    return where | {"collection": str(getattr(memory, "collection", config.collection))}


def backends_of(
    config: RunConfig, strategies: Sequence[Strategy], memory: Memory | None
) -> dict[str, str]:
    """The memory backend of each strategy that keeps lessons (an injected memory: none)."""
    out: dict[str, str] = {}
    for s in strategies:
        if s.memory == RUN_MEMORY and memory is None:
            out[s.name] = config.memory_backend
        elif s.memory is not None and s.memory != RUN_MEMORY:
            out[s.name] = s.memory
    return out


def open_memories(
    config: RunConfig,
    parsed: Parsed,
    folder: Path,
    backends: dict[str, str],
    loads: dict[str, float],
) -> tuple[dict[str, Memory], list[Memory]]:
    """One store per backend, shared by the strategies that use it: each strategy's store, and
    the stores opened (for the runner to close). `parsed`: the config's, by its `validate`."""
    c, ranking = config, parsed.ranking
    settings = StoreSettings(folder, c.memory, c.chroma_url, c.embedder, ranking, c.collection)
    opened: dict[str, Memory] = {}
    try:
        for name in dict.fromkeys(backends.values()):
            copy = c.memory_mode == "copy" and get_backend(name).shared
            opened[name] = _open(dataclasses.replace(settings, backend=name), copy, loads)
    except BaseException:
        close_all(list(opened.values()))
        raise
    return {strategy: opened[name] for strategy, name in backends.items()}, list(opened.values())


def _open(where: StoreSettings, copy: bool, loads: dict[str, float]) -> Memory:
    """The backend's store for the run. One that embeds loads its embedding model as it opens
    (chroma warms it): that time goes into `loads`, apart from any trial's."""
    start = time.perf_counter()
    memory = open_copy(where) if copy else open_store(where, Access.RUN)
    embedder = getattr(getattr(memory, "embedder", None), "name", None)
    if embedder is not None:
        took = round(time.perf_counter() - start, 3)
        loads[f"embedder {embedder} ({where.backend} store)"] = took
    return memory
