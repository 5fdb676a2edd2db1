"""The report files written into a run folder.

`write_report` turns results.jsonl + config.json into comparison.json, two PNG plots (three
for --order stream: success by position in the stream), report.md and a self-contained
report.html:

>>> report = write_report(Path("runs/x"), results, config)      # doctest: +SKIP
>>> [p.name for p in report.files]                              # doctest: +SKIP
['comparison.json', 'success_by_episode.png', 'success_by_tokens.png', 'report.md', 'report.html']
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Order
from reflexion.core.records import Step, TaskResult
from reflexion.core.runfolder import run_state
from reflexion.models.prices import Pricing, pricing
from reflexion.report.folders import run_steps
from reflexion.report.headline import headline, spent
from reflexion.report.memory import MemoryUse, memory_tables, memory_use
from reflexion.report.pages import Page, Table, render_html, render_markdown
from reflexion.report.paired import PAIR_COLUMNS, PAIRED_TEXT, Pair, all_pairs, pair_rows
from reflexion.report.plots import plot_by_cost, plot_by_episode, plot_by_position
from reflexion.report.signals import (
    SIGNAL_COLUMNS,
    SIGNALS_TEXT,
    SignalErrors,
    signal_errors,
    signal_rows,
)
from reflexion.report.stats import RESAMPLES
from reflexion.report.stream import (
    STREAM_TEXT,
    StreamCurve,
    stream_curves,
    stream_header,
    stream_note,
    stream_rows,
    stream_tasks,
)
from reflexion.report.summary import COLUMNS, Summary, header, summarize, table_rows
from reflexion.runner.config import FIELDS, RESULT_FIELDS, default_of
from reflexion.runner.parsers import label_of

COMPARISON, REPORT_MD, REPORT_HTML = "comparison.json", "report.md", "report.html"
BY_EPISODE, BY_TOKENS = "success_by_episode.png", "success_by_tokens.png"
BY_POSITION = "success_by_position.png"  # --order stream only


def write_comparison(
    folder: Path,
    summaries: Sequence[Summary],
    pairs: Sequence[Pair],
    signals: Sequence[SignalErrors],
    config: dict[str, Any],
    stream: Sequence[StreamCurve] = (),
    memory: MemoryUse | None = None,
    cost: Pricing | None = None,
) -> Path:
    """comparison.json: the config, every Summary (rates, intervals, costs and curves), every
    paired comparison of two strategies, the visible signal's errors against held-out,
    (--order stream) each strategy's success by position in the stream, and (when the trace
    has any) what memory cost and did: its share of each role's prompt tokens, refining, the
    lessons written; and `price`, what the cost in money was charged at (or why there is none)."""
    path = folder / COMPARISON
    data = {
        "config": config,
        "strategies": [s.to_dict() for s in summaries],
        "pairs": [p.to_dict() for p in pairs],
        "signals": [
            s.to_dict()
            | {
                "false_positive_rate": s.false_positive_rate,
                "false_negative_rate": s.false_negative_rate,
            }
            for s in signals
        ],
    }
    if cost is not None:
        data["price"] = cost.price.to_dict() if cost.price else {"none": cost.note}
    if stream:
        data["stream"] = [c.to_dict() for c in stream]
    if memory:
        data["memory"] = memory.to_dict()
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Report:
    summaries: list[Summary]
    pairs: list[Pair]  # every later strategy against every earlier one, paired by task
    signals: list[SignalErrors]  # the visible signal against held-out, per attempt
    files: list[Path]  # comparison.json, the PNGs, report.md, report.html
    stream: list[StreamCurve] = dataclasses.field(default_factory=list)  # --order stream
    memory: MemoryUse = MemoryUse()  # from the trace: memory's share, refining, lessons written
    headline: str = ""  # what the comparison found, in one line (reflexion.report.headline)
    spent: str = ""  # the wall time the run really took, as a line ("" when not recorded)


def write_report(
    folder: Path,
    results: Sequence[TaskResult],
    config: dict[str, Any],
    resamples: int = RESAMPLES,
    steps: Sequence[Step] | None = None,
) -> Report:
    """Write comparison.json, the two PNGs, report.md and report.html into `folder`; `steps`
    (None: the folder's trace.jsonl) tell what memory cost and did.

    >>> report = write_report(Path("runs/x"), results, config)      # doctest: +SKIP
    >>> report.files[-1]                                            # doctest: +SKIP
    PosixPath('runs/x/report.html')
    """
    order = config.get("strategies", ())
    episodes, task_tokens = config.get("episodes"), config.get("task_tokens")
    cost = run_pricing(config)
    summaries = summarize(results, order, episodes, resamples, task_tokens, cost)
    pairs = all_pairs(results, order, resamples)
    signals = signal_errors(results)
    stream = _stream(config, results)
    subtitle = _subtitle(config, results)
    memory = memory_use(run_steps(folder) if steps is None else steps, results, order)
    state = run_state(folder, config, results).note()
    lines = (headline(summaries, pairs, state), spent(config))
    try:
        paths = [write_comparison(folder, summaries, pairs, signals, config, stream, memory, cost)]
        series = [(s.strategy, s.by_episode) for s in summaries]
        paths.append(plot_by_episode(folder / BY_EPISODE, series, subtitle))
        unit = summaries[0].cost_unit if summaries else None
        series = [(s.strategy, s.by_cost) for s in summaries]
        paths.append(plot_by_cost(folder / BY_TOKENS, series, unit, subtitle))
        if stream:
            seed = config.get("stream_seed")
            order = "the env's order" if seed is None else f"shuffled by seed {seed}"
            paths.append(plot_by_position(folder / BY_POSITION, stream, f"{subtitle} · {order}"))
        page = _page(config, results, summaries, (pairs, signals, stream, memory), paths[1:])
        page = dataclasses.replace(page, headline=lines[0], under=[u for u in lines[1:] if u])
        for name, text in ((REPORT_MD, render_markdown(page)), (REPORT_HTML, render_html(page))):
            (folder / name).write_text(text, encoding="utf-8")
            paths.append(folder / name)
    except OSError as exc:
        msg = f"cannot write the report in {folder}: {exc.strerror or exc}"
        raise UsageError(msg) from None
    return Report(summaries, pairs, signals, paths, stream, memory, *lines)


def _stream(config: dict[str, Any], results: Sequence[TaskResult]) -> list[StreamCurve]:
    if config.get("order") != Order.STREAM:
        return []
    return stream_curves(results, stream_tasks(config, results), config.get("strategies", ()))


def run_pricing(config: dict[str, Any]) -> Pricing:
    """The price of a run's tokens: its --price, else the table's for its API model, else why
    there is none (a local model costs no money). UsageError for a --price that does not
    parse (a config.json written by hand)."""
    price = config.get("price")
    return pricing(config.get("model"), None if price is None else str(price))


def cost_text(cost: Pricing) -> str:
    """How the cost column was counted, for the reader.

    >>> cost_text(Pricing(None, "local model: no money cost"))
    'No cost in money (local model: no money cost): its cost is the tokens and the wall time.'
    """
    if cost.price is None:
        return f"No cost in money ({cost.note}): its cost is the tokens and the wall time."
    p = cost.price
    return (
        f"Cost is input tokens x ${p.input:g} + output tokens x ${p.output:g} per million "
        f"({p.source})."
    )


def _subtitle(config: dict[str, Any], results: Sequence[TaskResult]) -> str:
    tasks = len({r.task_id for r in results})
    seeds = len({r.seed for r in results})
    model = config.get("model") or "scripted actor"
    per = f"{tasks} tasks × {seeds} seeds" if seeds > 1 else f"{tasks} tasks, 1 seed"
    return f"env {config.get('env', '?')} · model {model} · {per}"


def facts(
    config: dict[str, Any], results: Sequence[TaskResult], summaries: Sequence[Summary]
) -> list[tuple[str, str]]:
    """The run's settings, labelled as RunConfig declares them: what the results depend on."""
    counted = {"tasks": len({r.task_id for r in results}), "seeds": len({r.seed for r in results})}
    facts = [("strategies", ", ".join(s.strategy for s in summaries))]
    for name in RESULT_FIELDS:
        value = counted.get(name, config.get(name, default_of(name)))
        if name == "model" and not value:
            value = "none (the env's scripted actor)"
        if value not in (None, "", {}):
            facts.append((label_of(FIELDS[name]), str(value)))
    facts.append(("run id", str(config.get("run_id", "?"))))
    created = config.get("created")
    if isinstance(created, int | float):
        facts.append(("created", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created))))
    return facts


def _stream_table(
    config: dict[str, Any], results: Sequence[TaskResult], curves: Sequence[StreamCurve]
) -> Table:
    tasks = len({r.task_id for r in results})
    note = stream_note(config, stream_tasks(config, results))
    title = "Success by position in the stream"
    return Table(title, stream_header(curves), stream_rows(curves, tasks), f"{note} {STREAM_TEXT}")


def _page(
    config: dict[str, Any],
    results: Sequence[TaskResult],
    summaries: Sequence[Summary],
    extra: tuple[Sequence[Pair], Sequence[SignalErrors], Sequence[StreamCurve], MemoryUse],
    plots: list[Path],
) -> Page:
    shown = facts(config, results, summaries)
    unit = summaries[0].cost_unit if summaries else None
    notes = {
        None: "No tokens or LLM calls were recorded (a scripted actor), so the cost plot is empty.",
        "LLM calls": "The model reported no token counts, so cost is counted in LLM calls.",
    }
    names = [*COLUMNS[:6], "tokens/trial", "tokens/solved", "LLM calls/solved"]
    names += ["wall s (summed)", "cost (USD)"]
    captions = ["Success vs episode", f"Success vs {unit or 'cost'}"]
    captions += ["Success by position in the stream"] * bool(extra[2])
    return Page(
        title=f"Reflexion comparison: {config.get('env', '?')}",
        facts=shown,
        header=header(summaries, names),
        rows=table_rows(summaries, digits=1),
        images=list(zip(captions, plots, strict=True)),
        notes=[*([notes[unit]] if unit in notes else []), cost_text(run_pricing(config))],
        tables=[
            t
            for t in (
                Table("Paired comparisons", PAIR_COLUMNS, pair_rows(extra[0]), PAIRED_TEXT),
                Table(
                    "The visible signal against held-out",
                    SIGNAL_COLUMNS,
                    signal_rows(extra[1]),
                    SIGNALS_TEXT,
                ),
                _stream_table(config, results, extra[2]),
                *(Table(*t) for t in memory_tables(extra[3])),
            )
            if t.rows
        ],
    )
