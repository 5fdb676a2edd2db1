"""A run's memory on the page: every lesson with its kind (a rule with its votes), provenance,
credit and flag, filtered by kind (`?kind=rule`), a search by similarity, and one lesson's page
(the episodes that recalled it, the lessons merged into it, its history). With --allow-edit, a
lesson can be forgotten after a confirmation; it stays in its history, as with `reflexion memory
forget`."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

from memory.backend import DEFAULT_EMBEDDER, Access
from reflexion.core.curation import FORGET, HISTORY, Change, Curated
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.records import KINDS, Reflection
from reflexion.curate.lessons import credits_in, recalls_of, search_sources, task_label, utc
from reflexion.curate.stores import opened
from reflexion.strategies import voted
from reflexion.web.layout import Html, join, link, page, pre, table, tag, url
from reflexion.web.site import NotFound, Site

SEARCH_HITS = 10


@contextlib.contextmanager
def sources_of(site: Site, name: str, access: Access = Access.READ) -> Iterator[list[Curated]]:
    """Every store of the run, opened as `reflexion memory` opens them (for changing: held
    against other writers) and closed after; UsageError or StoreError (a run without memory, a
    store that cannot be opened) say why there is nothing to show."""
    path = site.run(name)
    with site.stores, opened(path, None, access) as stores:
        yield stores


def memory_page(site: Site, name: str, query: str, note: str = "", kind: str = "") -> str:
    """The lessons of run `name` (only those of `kind`, when given), and those most similar to
    `query`; an unknown kind is a 404 page that names the kinds."""
    if kind and kind not in KINDS:
        msg = f"kind must be one of {', '.join(KINDS)}, got {kind[:40]!r}"
        raise NotFound(msg)
    crumbs = [(url("runs", name), name), (url("runs", name, "memory"), "memory")]
    body: list[object] = [tag("p", note, cls="note")] if note else []
    body.append(_search_form(name, query, kind))
    try:
        with sources_of(site, name) as stores:
            body.append(_kinds(name, stores, kind))
            if query:
                embedder = str(site.config(name).get("embedder") or "")
                body += _hits(name, stores, query, embedder, kind)
            for store in stores:
                body += _lessons(name, store, kind)
    except (UsageError, StoreError) as exc:
        body.append(tag("p", str(exc), cls="note"))
    return page(f"Memory of {name}", *body, crumbs=crumbs)


def _search_form(name: str, query: str, kind: str) -> Html:
    within = [tag("input", type="hidden", name="kind", value=kind)] if kind else []
    return tag(
        "form",
        tag("input", type="search", name="q", value=query, placeholder="search lessons"),
        *within,
        tag("button", "Search", type="submit"),
        action=url("runs", name, "memory"),
        method="get",
    )


def _kinds(name: str, stores: list[Curated], kind: str) -> Html:
    """Links that show one kind of lesson (the one shown in bold), with how many there are."""
    counts = Counter(r.kind for store in stores for r in store.lessons())
    here = url("runs", name, "memory")
    links: list[object] = [tag("strong", "all") if not kind else link(here, "all")]
    for k in [k for k in KINDS if counts[k]]:
        text = f"{k} ({counts[k]})"
        shown = url("runs", name, "memory", kind=k)
        links.append(tag("strong", text) if k == kind else link(shown, text))
    return tag("p", "Kinds: ", join(links, " · "), cls="kinds")


def _hits(name: str, stores: list[Curated], query: str, embedder: str, kind: str) -> list[Html]:
    hits = search_sources(stores, query, SEARCH_HITS, embedder or DEFAULT_EMBEDDER)
    rows = [
        (
            f"{h.similarity or 0.0:.3f}",
            _id_link(name, h.reflection),
            _kind(h.reflection),
            task_label(h.reflection.env, h.reflection.task_id),
            _short(h.reflection.text),
        )
        for h in hits
        if not kind or h.reflection.kind == kind
    ]
    return [
        tag("h2", f"Most similar to \u201c{query}\u201d"),
        table(("similarity", "lesson", "kind", "task", "text"), rows, cls="hits"),
    ]


def _lessons(name: str, store: Curated, kind: str) -> list[Html]:
    every, credit = store.lessons(), credits_in(store)
    lessons = [r for r in every if not kind or r.kind == kind]
    rows = [
        (
            _id_link(name, r),
            _kind(r),
            task_label(r.env, r.task_id),
            f"{r.strategy} seed {r.seed} episode {r.episode}",
            f"{r.score:.3g}",
            str(credit.get(r.id, "")),
            r.flag,
            _short(r.text),
        )
        for r in lessons
    ]
    head = ("lesson", "kind", "task", "written by", "score", "credit", "vague", "text")
    title = f"{len(lessons)} lessons in {store.label}"
    if kind:
        title = f"{len(lessons)} lessons of kind {kind} (of {len(every)}) in {store.label}"
    return [tag("h2", title), table(head, rows, cls="lessons")]


def _kind(r: Reflection) -> str:
    """A lesson's kind; a rule's votes with it (it drops out at 0)."""
    return f"{r.kind} ({r.votes} votes)" if voted(r.kind) else r.kind


def _id_link(name: str, r: Reflection) -> Html:
    return link(url("runs", name, "memory", r.id), r.id)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def lesson_page(site: Site, name: str, rid: str) -> str:
    crumbs = [(url("runs", name), name), (url("runs", name, "memory"), "memory")]
    crumbs.append((url("runs", name, "memory", rid), rid))
    try:
        with sources_of(site, name) as stores:
            body = _lesson(site, name, rid, stores)
    except (UsageError, StoreError) as exc:
        raise NotFound(str(exc)) from None
    return page(f"Lesson {rid}", *body, crumbs=crumbs)


def _lesson(site: Site, name: str, rid: str, stores: list[Curated]) -> list[Html]:
    stored = next(((s, r) for s in stores if (r := s.get(rid)) is not None), None)
    history = [v for s in stores if HISTORY in s.can for v in s.history(rid)]
    if stored is None and not history:
        msg = f"no lesson {rid!r} in the memory of run {name!r}"
        raise NotFound(msg)
    body: list[Html] = []
    if stored is None:
        body.append(tag("p", "Not stored now (see its history).", cls="note"))
    else:
        store, r = stored
        body += _about(site, name, store, r)
    if history:
        body += _history(history)
    return body


def _history(history: list[Change]) -> list[Html]:
    rows = [
        (
            f"#{v.number}",
            utc(v.when),
            v.action,
            v.why if v.why != v.action else "",
            v.before.text if v.before else "",
        )
        for v in history
    ]
    head = ("change", "when", "action", "why", "before")
    return [tag("h2", "History"), table(head, rows, cls="history")]


def _about(site: Site, name: str, store: Curated, r: Reflection) -> list[Html]:
    """The lesson's text, provenance and credit, who recalled it, and what was merged into it."""
    credit = credits_in(store).get(r.id)
    fields = [(k, v) for k, v in r.to_dict().items() if k not in ("text", "created")]
    fields.append(("created", utc(r.created)))
    body = [pre(r.text, cls="lesson"), table(("field", "value"), fields, cls="fields")]
    body.append(tag("p", f"Credit: {credit if credit is not None else 'not kept by this store'}"))
    recalls = recalls_of(site.run(name), r.id)
    rows = [
        (
            f"{step.strategy} seed {step.seed}",
            step.task_id,
            step.episode,
            "n/a" if sim is None else f"{sim:.3f}",
            source or "",
            "" if after is None else f"{r.score:.3g} -> {after:.3g}",
        )
        for step, sim, after, source in recalls
    ]
    head = ("recalled by", "task", "episode", "similarity", "from", "score")
    body += [
        tag("h2", f"Recalled {len(recalls)} times in this run"),
        table(head, rows, cls="recalls"),
    ]
    merged = store.merged_from(r.id)
    if merged:
        rows = [
            (m["id"], m["task_id"], m["strategy"], m["seed"], m["episode"], m["run_id"])
            for m in merged
        ]
        head = ("merged in", "task", "strategy", "seed", "episode", "run")
        body += [tag("h2", "Merged into this lesson"), table(head, rows, cls="merged")]
    if site.allow_edit and FORGET in store.can:
        forget = url("runs", name, "memory", r.id, "forget")
        body.append(tag("p", link(forget, "Forget this lesson…")))
    return body


def forget_lesson(site: Site, name: str, rid: str, why: str) -> int:
    """Forget lesson `rid` from whichever store of the run holds it (0: none does)."""
    try:
        with sources_of(site, name, Access.EDIT) as stores:
            for store in stores:
                if FORGET in store.can and store.get(rid) is not None:
                    return store.forget([rid], why or "forgotten on the web page")
    except (UsageError, StoreError) as exc:
        raise NotFound(str(exc)) from None
    return 0
