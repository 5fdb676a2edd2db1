"""The list of runs, and one run's page: its settings, the comparison table, the paired
comparisons, the visible signal's errors, (--order stream) success by position in the stream,
what memory cost and did (its share of each role's prompt, refining, the lessons written, with a
link to each kind on the memory page), the plots, and every task with each strategy's verdict."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.records import Kind, TaskResult
from reflexion.report.build import BY_EPISODE, BY_POSITION, BY_TOKENS, facts
from reflexion.report.memory_use import MemoryUse, memory_tables, memory_use
from reflexion.report.paired import PAIR_COLUMNS, all_pairs, pair_rows
from reflexion.report.signals import SIGNAL_COLUMNS, signal_errors, signal_rows
from reflexion.report.stream import (
    STREAM_TEXT,
    stream_curves,
    stream_header,
    stream_note,
    stream_rows,
    stream_tasks,
)
from reflexion.report.summary import COLUMNS, header, summarize, table_rows
from reflexion.web.layout import Html, esc, join, link, page, table, tag, url
from reflexion.web.site import Site

PLOTS = (BY_EPISODE, BY_TOKENS, BY_POSITION)
RESAMPLES = 1000  # bootstrap resamples for the page (the report uses more)


def runs_page(site: Site) -> str:
    rows: list[tuple[object, ...]] = []
    for name in site.runs:
        try:
            config, results = site.config(name), site.results(name)
        except (UsageError, ValueError, OSError) as exc:
            rows.append((name, f"unreadable: {exc}", "", "", "", "", ""))
            continue
        created = config.get("created")
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(created)) if created else ""
        rows.append(
            (
                link(url("runs", name), name),
                config.get("env", "?"),
                config.get("model") or "none",
                ", ".join(config.get("strategies", ())),
                len({r.task_id for r in results}),
                len(results),
                when,
            )
        )
    head = ("run", "env", "model", "strategies", "tasks", "trials", "created")
    return page("Runs", table(head, rows))


def run_page(site: Site, name: str) -> str:
    config, results = site.config(name), site.results(name)
    order = config.get("strategies", ())
    summaries = summarize(results, order, config.get("episodes"), RESAMPLES)
    settings = table(("setting", "value"), facts(config, results, summaries))
    body: list[object] = [tag("h2", "Settings"), settings]
    if not results:
        body.append(tag("p", "No trial has finished in this run yet.", cls="note"))
        return page(name, *body, crumbs=[(url("runs", name), name)])
    body += [tag("h2", "Results"), table(header(summaries, COLUMNS), table_rows(summaries, 1))]
    pairs = pair_rows(all_pairs(results, order, RESAMPLES))
    if pairs:
        body += [tag("h2", "Paired, on the same tasks"), table(PAIR_COLUMNS, pairs)]
    signals = signal_rows(signal_errors(results))
    if signals:
        body += [tag("h2", "The visible signal against held-out"), table(SIGNAL_COLUMNS, signals)]
    if config.get("order") == "stream":
        body += _stream(config, results)
    memory = memory_use(site.steps(name), results, order)
    body += _memory(memory)
    body += [tag("h2", "Plots"), _plots(site, name)]
    body += [tag("h2", "Tasks"), _tasks(name, results, order)]
    body.append(
        tag("p", link(url("runs", name, "memory"), "The memory of this run"), _kinds(name, memory))
    )
    return page(name, *body, crumbs=[(url("runs", name), name)])


def _memory(memory: MemoryUse) -> list[object]:
    body: list[object] = []
    for title, head, rows, text in memory_tables(memory):
        body += [tag("h2", title), table(head, rows), tag("p", text, cls="note")]
    return body


def _kinds(name: str, memory: MemoryUse) -> Html:
    """Links to the memory page showing each kind of lesson the run wrote."""
    written = {k for w in memory.writes for k in w.kinds}
    kinds = [link(url("runs", name, "memory", kind=k), k) for k in Kind if k in written]
    return join([": ", join(kinds, ", ")]) if kinds else join([])


def _stream(config: dict[str, Any], results: list[TaskResult]) -> list[object]:
    """Success by position in the stream, and wins and losses against single along it."""
    order = stream_tasks(config, results)
    curves = stream_curves(results, order, config.get("strategies", ()))
    rows = stream_rows(curves, len({r.task_id for r in results}))
    return [
        tag("h2", "Success by position in the stream"),
        tag("p", stream_note(config, order), cls="note"),
        table(stream_header(curves), rows),
        tag("p", STREAM_TEXT, cls="note"),
    ]


def _plots(site: Site, name: str) -> Html:
    found = [p for p in PLOTS if (site.run(name) / p).is_file()]
    if not found:
        hint = f"No plots yet: `reflexion report {site.run(name)}` draws them."
        return tag("p", hint, cls="note")
    return join(tag("img", src=url("runs", name, "plots", p), alt=p) for p in found)


def _tasks(name: str, results: list[TaskResult], order: list[str]) -> Html:
    """One row per task: each strategy's held-out verdict (seed 0) and its attempts."""
    by_task: dict[str, dict[str, TaskResult]] = defaultdict(dict)
    first_seed = min(r.seed for r in results)
    for r in results:
        if r.seed == first_seed:
            by_task[r.task_id][r.strategy] = r
    strategies = [s for s in order if any(s in v for v in by_task.values())]
    rows = []
    for task_id, done in by_task.items():
        cells: list[object] = [link(url("runs", name, "tasks", task_id), task_id)]
        for s in strategies:
            trial = done.get(s)
            cells.append("" if trial is None else _verdict(trial))
        rows.append(cells)
    return table(("task", *strategies), rows)


def _verdict(r: TaskResult) -> Html:
    word, cls = ("passed", "pass") if r.final_passed else ("failed", "fail")
    return join([tag("span", word, cls=cls), f" ({r.attempts} attempts)"])


def not_found_page(message: str) -> str:
    return page("Not found", tag("p", esc(message)), tag("p", link("/", "All runs")))
