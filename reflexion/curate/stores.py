"""What a run's memory holds, read for the `reflexion memory` commands and the web page: where a
run folder's stores are, every store a backend finds there, each lesson's credit, the episodes
that recalled it, and a search across stores."""

from __future__ import annotations

from pathlib import Path

from memory.backend import DEFAULT_EMBEDDER, StoreSettings
from memory.chroma.credit import Credit, credits
from memory.chroma.store import ChromaMemory
from memory.registry import BACKENDS
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.protocols import Memory
from reflexion.core.records import Recalled, Step
from reflexion.loop.runfolder import RunFolder

Recall = tuple[Step, float | None, float | None, str]  # the step, similarity, next score, source


def check_has_memory(path: Path, url: str | None) -> None:
    """A run folder whose strategies keep no lessons has no store to open: say so, and name
    the strategies that would have made one (rather than "cannot open Chroma store")."""
    config = RunFolder(path).load_config() if path.is_dir() and url is None else None
    if config is None:
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


def store_folder(path: Path, url: str | None) -> Path | None:
    """The Chroma store folder a change goes to: the run's (OUT/memory, or its --memory DIR),
    or `path` itself when it is a store; None for a server."""
    if url:
        return None
    if (path / "chroma.sqlite3").exists():
        return path
    from memory.chroma.backend import store_path

    return store_path(settings_for(path, None)) if path.exists() else path


def settings_for(path: Path, url: str | None) -> StoreSettings:
    """Where the stores of a run folder are (as its config.json says), or `path` as a store."""
    config = RunFolder(path).load_config() if path.is_dir() else None
    embedder = str((config or {}).get("embedder") or DEFAULT_EMBEDDER)  # for the window's search
    if url:
        return StoreSettings(path, chroma_url=url, embedder=embedder)
    if not path.exists():
        msg = f"{path} does not exist"
        raise UsageError(msg)
    if config is None:
        return StoreSettings(path, memory=str(path))
    if config.get("memory_mode") == "copy":  # the run's lessons are in its own copy
        return StoreSettings(path, embedder=embedder)
    return StoreSettings(path, config.get("memory"), config.get("chroma_url"), embedder)


def run_chroma_url(path: Path) -> str | None:
    """The Chroma server a run folder's lessons went to (its --chroma-url), if any."""
    config = RunFolder(path).load_config() if path.is_dir() else None
    url = (config or {}).get("chroma_url")
    copied = (config or {}).get("memory_mode") == "copy"  # its lessons are in OUT/memory
    return str(url) if url and not copied else None


def open_sources(settings: StoreSettings, path: Path) -> list[tuple[str, Memory]]:
    """Every store a backend finds for this run folder (or store folder), with a label."""
    sources: list[tuple[str, Memory]] = []
    for backend in BACKENDS.values():
        memory = backend.find(settings)
        if memory is not None:
            sources.append((_label(memory, backend.name, settings), memory))
    if not sources:
        looked = "; ".join(b.where(settings) for b in BACKENDS.values() if b.where is not None)
        msg = f"no memory store for {path}: {looked}"
        raise StoreError(msg)
    return sources


def _label(memory: Memory, backend: str, settings: StoreSettings) -> str:
    info = getattr(memory, "info", None)
    if callable(info):
        about = info()
        model = f"embedding model {about['embedding_model']}, dim {about['embedding_dim']}"
        return f"{about['location']} ({model})"
    path = getattr(memory, "path", None)
    return f"{path or settings.folder} (reflexion-{backend})"


def search_sources(
    sources: list[tuple[str, Memory]], text: str, k: int, embedder: str
) -> list[Recalled]:
    """Hits from every source, most similar first. A store with no index of its own (the window
    list) is embedded here, with the run's embedding model."""
    from memory.embedders import embedder_for

    hits: list[Recalled] = []
    for _, memory in sources:
        found = memory.search(text, k)
        if all(h.similarity is not None for h in found):
            hits += found
            continue
        rs = memory.reflections()
        query, *vectors = embedder_for(embedder).embed([text, *(r.text for r in rs)])
        for r, v in zip(rs, vectors, strict=True):
            hits.append(Recalled(r, sum(a * b for a, b in zip(query, v, strict=True))))
    return sorted(hits, key=lambda h: -(h.similarity or 0.0))[:k]


def credits_in(memory: Memory) -> dict[str, Credit]:
    """Each lesson's credit, where the store keeps it (a Chroma store does)."""
    return credits(memory) if isinstance(memory, ChromaMemory) else {}


def recalls_of(path: Path, reflection_id: str) -> list[Recall]:
    """Every recall step in the run's trace that returned this reflection: the step, its
    similarity, and the visible score of the attempt made in that episode."""
    if not (path / "trace.jsonl").exists():
        return []
    steps = RunFolder(path).steps()
    scores = {
        (s.strategy, s.task_id, s.seed, s.episode): float(s.data["value"])
        for s in steps
        if s.kind == "score"
    }
    found = []
    for step in steps:
        for hit in step.data.get("hits", []) if step.kind == "recall" else []:
            if hit["id"] == reflection_id:
                key = (step.strategy, step.task_id, step.seed, step.episode)
                # where the lesson came from, for this episode ("" in traces made before)
                source = str(hit.get("source", ""))
                found.append((step, hit["similarity"], scores.get(key), source))
    return found
