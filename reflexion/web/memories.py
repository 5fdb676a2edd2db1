"""A run's memory on the page: every lesson with its provenance, credit and flag, a search by
similarity, and one lesson's page (the episodes that recalled it, the lessons merged into it, its
history). With --allow-edit, a lesson can be forgotten after a confirmation; it stays in its
history, as with `reflexion memory forget`."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from memory.backend import DEFAULT_EMBEDDER
from memory.chroma import changes
from memory.chroma.lock import StoreLock
from memory.chroma.merging import merged_from
from memory.chroma.store import ChromaMemory
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.protocols import Memory
from reflexion.core.records import Reflection
from reflexion.loop.memories import (
    check_has_memory,
    credits_in,
    open_sources,
    recalls_of,
    search_sources,
    settings_for,
    store_folder,
)
from reflexion.web.layout import Html, link, page, pre, table, tag, url
from reflexion.web.site import NotFound, Site

SEARCH_HITS = 10


@contextlib.contextmanager
def sources_of(site: Site, name: str) -> Iterator[list[tuple[str, Memory]]]:
    """Every store of the run, opened for reading and closed after; UsageError or StoreError
    (a run without memory, a store that cannot be opened) say why there is nothing to show."""
    path = site.run(name)
    check_has_memory(path, None)
    with site.stores:
        sources = open_sources(settings_for(path, None), path)
        try:
            yield sources
        finally:
            for _, memory in sources:
                close = getattr(memory, "close", None)
                if callable(close):
                    close()


def memory_page(site: Site, name: str, query: str, note: str = "") -> str:
    crumbs = [(url("runs", name), name), (url("runs", name, "memory"), "memory")]
    form = tag(
        "form",
        tag("input", type="search", name="q", value=query, placeholder="search lessons"),
        tag("button", "Search", type="submit"),
        action=url("runs", name, "memory"),
        method="get",
    )
    body: list[object] = [tag("p", note, cls="note")] if note else []
    body.append(form)
    try:
        with sources_of(site, name) as sources:
            if query:
                body += _hits(name, sources, query, str(site.config(name).get("embedder") or ""))
            for label, memory in sources:
                body += _lessons(name, label, memory)
    except (UsageError, StoreError) as exc:
        body.append(tag("p", str(exc), cls="note"))
    return page(f"Memory of {name}", *body, crumbs=crumbs)


def _hits(name: str, sources: list[tuple[str, Memory]], query: str, embedder: str) -> list[Html]:
    hits = search_sources(sources, query, SEARCH_HITS, embedder or DEFAULT_EMBEDDER)
    rows = [
        (f"{h.similarity or 0.0:.3f}", _id_link(name, h.reflection), h.reflection.task_id,
         _short(h.reflection.text))
        for h in hits
    ]  # fmt: skip
    return [
        tag("h2", f"Most similar to \u201c{query}\u201d"),
        table(("similarity", "lesson", "task", "text"), rows, cls="hits"),
    ]


def _lessons(name: str, label: str, memory: Memory) -> list[Html]:
    lessons, credit = memory.reflections(), credits_in(memory)
    rows = [
        (_id_link(name, r), r.task_id, f"{r.strategy} seed {r.seed} episode {r.episode}",
         f"{r.score:.3g}", str(credit.get(r.id, "")), r.flag, _short(r.text))
        for r in lessons
    ]  # fmt: skip
    head = ("lesson", "task", "written by", "score", "credit", "vague", "text")
    return [tag("h2", f"{len(lessons)} lessons in {label}"), table(head, rows, cls="lessons")]


def _stored(memory: Memory, rid: str) -> Reflection | None:
    """The lesson as `memory` holds it now (a Chroma store looks it up by id)."""
    if isinstance(memory, ChromaMemory):
        return memory.get(rid)
    return next((r for r in memory.reflections() if r.id == rid), None)


def _id_link(name: str, r: Reflection) -> Html:
    return link(url("runs", name, "memory", r.id), r.id)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def lesson_page(site: Site, name: str, rid: str) -> str:
    crumbs = [(url("runs", name), name), (url("runs", name, "memory"), "memory")]
    crumbs.append((url("runs", name, "memory", rid), rid))
    try:
        with sources_of(site, name) as sources:
            found = [(m, _stored(m, rid)) for _, m in sources]
            body = _lesson(site, name, rid, found)
    except (UsageError, StoreError) as exc:
        raise NotFound(str(exc)) from None
    return page(f"Lesson {rid}", *body, crumbs=crumbs)


def _lesson(
    site: Site, name: str, rid: str, found: list[tuple[Memory, Reflection | None]]
) -> list[Html]:
    stored = next(((m, r) for m, r in found if r is not None), None)
    history = [v for m, _ in found if isinstance(m, ChromaMemory) for v in _versions(m, rid)]
    if stored is None and not history:
        msg = f"no lesson {rid!r} in the memory of run {name!r}"
        raise NotFound(msg)
    body: list[Html] = []
    if stored is None:
        body.append(tag("p", "Not stored now (see its history).", cls="note"))
    else:
        memory, r = stored
        body += _about(site, name, memory, r)
    if history:
        rows = [(f"#{v.number}", _when(v.when), v.action, v.why, v.before.text if v.before else "")
                for v in history]  # fmt: skip
        head = ("change", "when", "action", "why", "before")
        body += [tag("h2", "History"), table(head, rows, cls="history")]
    return body


def _about(site: Site, name: str, memory: Memory, r: Reflection) -> list[Html]:
    """The lesson's text, provenance and credit, who recalled it, and what was merged into it."""
    credit = credits_in(memory).get(r.id)
    fields = [(k, v) for k, v in r.to_dict().items() if k not in ("text", "created")]
    fields.append(("created", _when(r.created)))
    body = [pre(r.text, cls="lesson"), table(("field", "value"), fields, cls="fields")]
    body.append(tag("p", f"Credit: {credit if credit is not None else 'not kept by this store'}"))
    recalls = recalls_of(site.run(name), r.id)
    rows = [
        (f"{step.strategy} seed {step.seed}", step.task_id, step.episode,
         "n/a" if sim is None else f"{sim:.3f}", source or "",
         "" if after is None else f"{r.score:.3g} -> {after:.3g}")
        for step, sim, after, source in recalls
    ]  # fmt: skip
    head = ("recalled by", "task", "episode", "similarity", "from", "score")
    body += [
        tag("h2", f"Recalled {len(recalls)} times in this run"),
        table(head, rows, cls="recalls"),
    ]
    merged = merged_from(memory, r.id) if isinstance(memory, ChromaMemory) else []
    if merged:
        rows = [(m["id"], m["task_id"], m["strategy"], m["seed"], m["episode"], m["run_id"])
                for m in merged]  # fmt: skip
        head = ("merged in", "task", "strategy", "seed", "episode", "run")
        body += [tag("h2", "Merged into this lesson"), table(head, rows, cls="merged")]
    if site.allow_edit and isinstance(memory, ChromaMemory) and memory.path is not None:
        forget = url("runs", name, "memory", r.id, "forget")
        body.append(tag("p", link(forget, "Forget this lesson…")))
    return body


def _versions(memory: ChromaMemory, rid: str) -> list[Any]:
    with memory.changelog() as log:
        return list(log.of(rid))


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


@contextlib.contextmanager
def writable(site: Site, name: str) -> Iterator[ChromaMemory]:
    """The run's own Chroma store folder, held against other writers (a run waits)."""
    path = site.run(name)
    check_has_memory(path, None)
    folder = store_folder(path, None)
    if folder is None or not (folder / "chroma.sqlite3").exists():
        msg = f"run {name!r} has no Chroma store folder to change"
        raise NotFound(msg)
    lock = StoreLock(folder)
    try:
        with site.stores, ChromaMemory.open(folder) as memory:
            yield memory
    finally:
        lock.close()


def forget_lesson(site: Site, name: str, rid: str, why: str) -> int:
    with writable(site, name) as memory:
        return changes.forget(memory, [rid], why or "forgotten on the web page")
