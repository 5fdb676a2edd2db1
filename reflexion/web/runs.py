"""One run's page, results first: one line that says what the comparison found (and whether the
run is still going, or stopped before its end), the comparison table (with tokens per trial and
the cost in money), the matrix of paired differences coloured by p-value, success by episode and
(--order stream) by position in the stream, then every task with each strategy's verdict,
filterable by verdict and strategy; then the visible signal's errors, what memory cost and did
(its share of each role's prompt, refining, the lessons written, with a link to each kind on the
memory page), the plots, and last the settings, folded away."""

from __future__ import annotations

import json
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Kind, Order
from reflexion.core.records import TaskResult
from reflexion.core.runfolder import run_state
from reflexion.models.prices import Pricing
from reflexion.report.build import (
    BY_EPISODE,
    BY_POSITION,
    BY_TOKENS,
    COMPARISON,
    cost_text,
    facts,
    run_pricing,
)
from reflexion.report.headline import headline, spent
from reflexion.report.memory import MemoryUse, memory_tables, memory_use
from reflexion.report.paired import all_pairs
from reflexion.report.signals import SIGNAL_COLUMNS, signal_errors, signal_rows
from reflexion.report.stream import (
    STREAM_TEXT,
    stream_curves,
    stream_header,
    stream_note,
    stream_rows,
    stream_tasks,
)
from reflexion.report.summary import COLUMNS, Summary, header, summarize, table_rows
from reflexion.web.layout import Html, esc, join, link, page, table, tag, url
from reflexion.web.matrix import MATRIX_TEXT, episode_table, legend, pair_matrix
from reflexion.web.site import Site
from reflexion.web.task_list import task_list

PLOTS = (BY_EPISODE, BY_TOKENS, BY_POSITION)
RESAMPLES = 1000  # bootstrap resamples for the page (the report uses more)


def run_page(site: Site, name: str, verdict: str = "", strategy: str = "") -> str:
    config, results = site.config(name), site.results(name)
    order = config.get("strategies", ())
    try:
        cost = run_pricing(priced_config(site, name, config))
    except UsageError as exc:  # a price in a config.json written by hand
        cost = Pricing(None, str(exc))
    summaries = summarize(results, order, config.get("episodes"), RESAMPLES, pricing=cost)
    crumbs = [(url("runs", name), name)]
    state = run_state(site.run(name), config, results).note()
    if not results:
        waiting = tag("p", "No trial has finished in this run yet.", cls="note")
        status = [tag("p", state, cls="state")] if state else []
        return page(name, *status, waiting, _settings(config, results, summaries), crumbs=crumbs)
    names = [s.strategy for s in summaries]
    pairs = all_pairs(results, order, RESAMPLES)
    body: list[object] = [
        tag("p", tag("strong", headline(summaries, pairs, state)), cls="headline"),
        tag("h2", "Results"),
        table(header(summaries, COLUMNS), table_rows(summaries, 1), cls="results"),
        *([tag("p", spent(config), cls="note")] if spent(config) else []),
        tag("p", cost_text(cost), cls="note"),
    ]
    if pairs:
        body += [tag("h2", "Paired differences, on the same tasks"), pair_matrix(pairs, names)]
        body += [legend(), tag("p", MATRIX_TEXT, cls="note")]
    if config.get("order") == Order.STREAM:
        body += _stream(config, results)
    body += [tag("h2", "Success by episode"), episode_table(summaries)]
    body += [tag("h2", "Tasks", id="tasks"), *task_list(name, results, names, verdict, strategy)]
    signals = signal_rows(signal_errors(results))
    if signals:
        body += [tag("h2", "The visible signal against held-out"), table(SIGNAL_COLUMNS, signals)]
    memory = memory_use(site.steps(name), results, order)
    body += _memory(memory)
    body.append(
        tag("p", link(url("runs", name, "memory"), "The memory of this run"), _kinds(name, memory))
    )
    body += [tag("h2", "Plots"), _plots(site, name), _settings(config, results, summaries)]
    return page(name, *body, crumbs=crumbs)


def priced_config(site: Site, name: str, config: dict[str, Any]) -> dict[str, Any]:
    """The config, with the price `reflexion report --price` last wrote into comparison.json
    when the run itself had none (config.json keeps what the run was started with)."""
    if config.get("price"):
        return config
    try:
        written = json.loads((site.run(name) / COMPARISON).read_text(encoding="utf-8"))
        price = written["config"].get("price")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return config
    return config | {"price": price} if price else config


def _settings(config: dict[str, Any], results: list[TaskResult], summaries: list[Summary]) -> Html:
    facts_ = facts(config, results, summaries)
    folded = tag("summary", f"Settings ({len(facts_)})")
    return tag("details", folded, table(("setting", "value"), facts_), id="settings")


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
        table(stream_header(curves), rows, cls="stream"),
        tag("p", STREAM_TEXT, cls="note"),
    ]


def _plots(site: Site, name: str) -> Html:
    found = [p for p in PLOTS if (site.run(name) / p).is_file()]
    if not found:
        hint = f"No plots yet: `reflexion report {site.run(name)}` draws them."
        return tag("p", hint, cls="note")
    return join(tag("img", src=url("runs", name, "plots", p), alt=p) for p in found)


def not_found_page(message: str) -> str:
    return page("Not found", tag("p", esc(message)), tag("p", link("/", "All runs")))
