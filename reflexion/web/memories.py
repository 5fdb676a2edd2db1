"""A run's memory on the page: every lesson with its kind (a rule with its votes), provenance,
credit and flag, filtered as `reflexion memory list` filters (`?kind=rule&strategy=insights&
task=words/w1`) and counted as it counts, store by store, with the total over the run's stores
and each kind's share of it; a search by similarity, within the filters (fetched once the page is
shown, since the first search loads the embedding model); and one lesson's page
(the episodes that recalled it, the lessons merged into it, its history). With --allow-edit, a
lesson can be forgotten after a confirmation; it stays in its history, as with `reflexion memory
forget`."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from memory.backend import DEFAULT_EMBEDDER, Access
from reflexion.core.curation import EVERY, FORGET, HISTORY, Change, Chosen, Curated, utc
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.lesson_records import KINDS, Reflection
from reflexion.curate.lessons import pick_task, search_sources, task_label, unknown
from reflexion.curate.recalls import recollections
from reflexion.curate.stores import credits_in, opened
from reflexion.strategies import voted
from reflexion.web.layout import Html, join, link, page, pre, table, tag, url
from reflexion.web.site import NotFound, Site
from reflexion.web.task_list import choose

SEARCH_HITS = 10


@contextlib.contextmanager
def sources_of(site: Site, name: str, access: Access = Access.READ) -> Iterator[list[Curated]]:
    """Every store of the run, opened as `reflexion memory` opens them (for changing: held
    against other writers) and closed after; UsageError or StoreError (a run without memory, a
    store that cannot be opened) say why there is nothing to show."""
    path = site.run(name)
    with site.stores, opened(path, None, access) as stores:
        yield stores


@contextlib.contextmanager
def chosen_sources(
    site: Site, name: str, filters: Filters
) -> Iterator[tuple[list[Curated], Chosen]]:
    """The run's stores (as `sources_of`) and the lessons `filters` choose among them; an
    unknown kind, strategy or task is a 404 that names the known ones."""
    with sources_of(site, name) as stores:
        try:
            chosen = filters.chosen(stores, f"the memory of run {name!r}")
        except UsageError as exc:
            raise NotFound(str(exc)) from None
        yield stores, chosen


@dataclass(frozen=True)
class Filters:
    """What the memory page lists: `memory list`'s --kind, --strategy and --task, and a search."""

    kind: str = ""
    strategy: str = ""
    task: str = ""  # as `memory list --task` takes it: q2, or quadratic/q2
    query: str = ""

    def chosen(self, stores: list[Curated], where: object) -> Chosen:
        """The lessons these filters admit, as `memory list` picks them; a UsageError names
        what no lesson has."""
        every = [r for store in stores for r in store.lessons()]
        chosen = Chosen(kind=self.kind or None, strategy=self.strategy or None)
        if self.task:
            env, task = pick_task(self.task, [(r.env, r.task_id) for r in every], where)
            chosen = dataclasses.replace(chosen, env=env, task=task)
        if self.strategy and self.strategy not in {r.strategy for r in every}:
            what = "lessons of strategy"
            raise unknown(what, self.strategy, [r.strategy for r in every], where)
        return chosen

    def query_string(self, **changed: str) -> dict[str, str]:
        """The filters (with `changed`) as an address's query, the empty ones left out."""
        given = {"kind": self.kind, "strategy": self.strategy, "task": self.task, "q": self.query}
        return {k: v for k, v in (given | changed).items() if v}


def memory_page(site: Site, name: str, filters: Filters, note: str = "") -> str:
    """The lessons of run `name` that `filters` admit, counted store by store as `reflexion
    memory list` counts them, and those most similar to the query; an unknown kind, strategy
    or task is a 404 page that names the known ones."""
    check_kind(filters)
    crumbs = [(url("runs", name), name), (url("runs", name, "memory"), "memory")]
    body: list[object] = [tag("p", note, cls="note")] if note else []
    try:
        with chosen_sources(site, name, filters) as (stores, chosen):
            body += [_filter_form(name, stores, filters), _counts(stores, chosen)]
            body.append(_kinds(name, stores, filters, chosen))
            warm(str(site.config(name).get("embedder") or "") or DEFAULT_EMBEDDER)
            if filters.query:
                body.append(_searching(name, filters))
            for store in stores:
                body += _lessons(name, store, chosen, filters)
    except (UsageError, StoreError) as exc:
        body.append(tag("p", str(exc), cls="note"))
    return page(f"Memory of {name}", *body, crumbs=crumbs)


@functools.cache
def warm(embedder: str) -> None:
    """Load the embedding model in the background, once per server: a page of lessons is
    shown while it loads, and a search made after it does not wait for it."""
    from memory.embedders import embedder_for

    def load() -> None:
        with contextlib.suppress(Exception):  # noqa: BLE001 - the search itself will say why
            embedder_for(embedder).embed(["warm-up"])

    threading.Thread(target=load, name=f"warm {embedder}", daemon=True).start()


def _searching(name: str, filters: Filters) -> Html:
    """Where the hits go: a note that counts the seconds until the search page answers, then
    its section in place of this one (without scripts: a link to it)."""
    src = url("runs", name, "search", **filters.query_string())
    note = "searching… (the first search loads the embedding model, which takes a few seconds)"
    return tag(
        "section",
        tag("p", note, cls="note searching", role="status"),
        tag("noscript", link(src, "Show the lessons most similar to the search")),
        FETCH_HITS,
        id="hits",
        data_src=src,
    )


# fetch the search page and put its section in place of the note; count the seconds meanwhile
FETCH_HITS = Html(
    "<script>(async () => {const box = document.currentScript.parentElement;"
    "const note = box.querySelector('.searching'); const text = note.textContent;"
    "const start = Date.now(); const tick = setInterval(() => {note.textContent = text + ' ' +"
    " Math.round((Date.now() - start) / 1000) + ' s';}, 1000);"
    "try {const answer = await fetch(box.dataset.src);"
    "const doc = new DOMParser().parseFromString(await answer.text(), 'text/html');"
    "const found = doc.getElementById('hits');"
    "if (found) {box.replaceWith(found);} else {note.textContent = 'the search failed: ' +"
    " answer.status;}} catch (e) {note.textContent = 'the search failed: ' + e;}"
    "finally {clearInterval(tick);}})();</script>"
)


def check_kind(filters: Filters) -> None:
    """A 404 that names the kinds, for a kind there is none of."""
    if filters.kind and filters.kind not in KINDS:
        msg = f"kind must be one of {', '.join(KINDS)}, got {filters.kind[:40]!r}"
        raise NotFound(msg)


def _filter_form(name: str, stores: list[Curated], filters: Filters) -> Html:
    """Search, and pick a kind, a strategy and a task (each: the values the lessons hold)."""
    every = [r for store in stores for r in store.lessons()]
    kinds = [k for k in KINDS if any(r.kind == k for r in every)]
    strategies = sorted({r.strategy for r in every})
    tasks = sorted({task_label(r.env, r.task_id) for r in every})
    return tag(
        "form",
        tag("input", type="search", name="q", value=filters.query, placeholder="search lessons"),
        tag("label", " kind ", choose("kind", _any(kinds, "every kind"), filters.kind)),
        tag(
            "label",
            " strategy ",
            choose("strategy", _any(strategies, "every strategy"), filters.strategy),
        ),
        tag("label", " task ", choose("task", _any(tasks, "every task"), filters.task)),
        " ",
        tag("button", "Search", type="submit"),
        action=url("runs", name, "memory"),
        method="get",
        cls="filter",
    )


def _any(values: list[str], every: str) -> list[tuple[str, str]]:
    return [("", every), *((v, v) for v in values)]


def _counts(stores: list[Curated], chosen: Chosen) -> Html:
    """How many lessons pass the filters, in all and per store (`memory list`'s numbers)."""
    counts = [(store.label, len(store.lessons(chosen))) for store in stores]
    total = sum(n for _, n in counts)
    every = sum(len(store.lessons()) for store in stores)
    shown = f"{total} lessons" if chosen == EVERY else f"{total} of {every} lessons"
    if len(stores) == 1:  # the store's heading says it, with the filters in words, if shown
        shown_below = total > 0 or chosen == EVERY
        return join([]) if shown_below else tag("p", f"{shown} in {counts[0][0]}", cls="counts")
    parts = "; ".join(f"{n} in {label}" for label, n in counts)
    return tag("p", f"{shown} in {len(stores)} stores: {parts}", cls="counts")


def _kinds(name: str, stores: list[Curated], filters: Filters, chosen: Chosen) -> Html:
    """Links that show one kind of lesson (the one shown in bold), with how many of the lessons
    the other filters admit are of it, in every store together."""
    others = dataclasses.replace(chosen, kind=None)
    counts = Counter(r.kind for store in stores for r in store.lessons(others))
    here = url("runs", name, "memory", **filters.query_string(kind=""))
    every = tag("strong", "all") if not filters.kind else link(here, "all")
    links: list[object] = [every]
    for k in [k for k in KINDS if counts[k]]:
        text = f"{k} ({counts[k]})"
        shown = url("runs", name, "memory", **filters.query_string(kind=k))
        links.append(tag("strong", text) if k == filters.kind else link(shown, text))
    where = f" (in all {len(stores)} stores)" if len(stores) > 1 else ""
    return tag("p", f"Kinds{where}: ", join(links, " · "), cls="kinds")


def _hits(
    name: str, stores: list[Curated], query: str, embedder: str, chosen: Chosen
) -> list[Html]:
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
        if chosen.admits(h.reflection)
    ]
    return [
        tag("h2", f"Most similar to \u201c{query}\u201d"),
        table(("similarity", "lesson", "kind", "task", "text"), rows, cls="hits"),
    ]


def _lessons(name: str, store: Curated, chosen: Chosen, filters: Filters) -> list[Html]:
    every, credit = store.lessons(), credits_in(store)
    lessons = store.lessons(chosen)
    if not lessons and chosen != EVERY:
        return []  # as `memory list` leaves out a store none of whose lessons pass
    rows = [
        (
            _id_link(name, r),
            _kind(r),
            task_label(r.env, r.task_id),
            f"{r.strategy} seed {r.seed} episode {r.episode}",
            r.run_id,
            f"{r.score:.3g}",
            str(credit.get(r.id, "")),
            r.flag,
            r.verdict(),
            _short(r.text),
        )
        for r in lessons
    ]
    head = (
        "lesson",
        "kind",
        "task",
        "written by",
        "run",
        "score",
        "credit",
        "vague",
        "gate",
        "text",
    )
    title = f"{len(lessons)} lessons in {store.label}"
    if chosen != EVERY:
        title = f"{len(lessons)} lessons {_which(filters)} (of {len(every)}) in {store.label}"
    return [tag("h2", title), table(head, rows, cls="lessons")]


def _which(filters: Filters) -> str:
    """The filters in words: "of kind rule, by reflexion, of task words/w1"."""
    parts = [f"of kind {filters.kind}"] * bool(filters.kind)
    parts += [f"by {filters.strategy}"] * bool(filters.strategy)
    parts += [f"of task {filters.task}"] * bool(filters.task)
    return ", ".join(parts)


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
            v.before.text if v.before else "(not stored)",
        )
        for v in history
    ]
    head = ("change", "when", "action", "why", "before")
    return [tag("h2", "History"), table(head, rows, cls="history")]


def progress(before: float | None, after: float | None) -> str:
    """The score column of a recall: the recalling trial's previous attempt -> this attempt.

    >>> progress(None, 0.5), progress(-10.23, -2.558)
    ('first attempt scored 0.5', '-10.2 -> -2.56')
    """
    if after is None:
        return ""
    return f"first attempt scored {after:.3g}" if before is None else f"{before:.3g} -> {after:.3g}"


def _about(site: Site, name: str, store: Curated, r: Reflection) -> list[Html]:
    """The lesson's text, provenance and credit, who recalled it, and what was merged into it."""
    credit = credits_in(store).get(r.id)
    fields = [(k, v) for k, v in r.to_dict().items() if k not in ("text", "created")]
    fields.append(("created", utc(r.created)))
    body = [pre(r.text, cls="lesson"), table(("field", "value"), fields, cls="fields")]
    body.append(tag("p", f"Credit: {credit if credit is not None else 'not kept by this store'}"))
    recalls = recollections(site.run(name), r.id)
    rows = [
        (
            f"{c.step.strategy} seed {c.step.seed}",
            c.step.task_id,
            c.step.episode,
            "n/a" if c.similarity is None else f"{c.similarity:.3f}",
            c.source or "",
            progress(c.before, c.after),  # the recalling trial's previous attempt, then this one
        )
        for c in recalls
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
