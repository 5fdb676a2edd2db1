"""The list of runs, as a dashboard: each run's best strategy (or a tie), every strategy's held-out
pass rate, its tokens and date, sortable by any of them (`/?sort=best&desc=1`, the header's links);
a run still going or stopped before its end says how far it got ("in progress: 2 of 5 trials");
a warning on a folder `compare` would refuse to resume (written by a newer version, or with a
setting this version does not know); and a form that sets two runs side by side (/diff)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.records import TaskResult
from reflexion.core.runfolder import RunFolder, run_state
from reflexion.web.layout import Html, join, link, page, table, tag, url
from reflexion.web.site import Site


@dataclass(frozen=True)
class RunRow:
    """One run folder as the list shows it (`error`: why it could not be read)."""

    name: str
    config: dict[str, Any] = field(default_factory=dict)
    rates: dict[str, float] = field(default_factory=dict)  # strategy -> final pass rate
    counts: dict[str, int] = field(default_factory=dict)  # strategy -> trials finished
    tokens: int = 0
    trials: int = 0
    tasks: int = 0
    warning: str = ""
    error: str = ""
    state: str = ""  # a run still going or stopped before its end: "in progress: 2 of 5 trials"

    @property
    def best(self) -> tuple[str, float] | None:
        """The highest final pass rate and who had it: a strategy, or on a tie all that share
        it ("tie: a, b", or "tie: all 3 strategies" when no strategy did better than another)."""
        if not self.rates:
            return None
        top = max(self.rates.values())
        names = [s for s, v in self.rates.items() if v == top]
        if len(names) == 1:
            return names[0], top
        return (
            "tie: "
            + (
                f"all {len(names)} strategies"
                if len(names) == len(self.rates)
                else ", ".join(names)
            )
        ), top

    @property
    def created(self) -> float:
        value = self.config.get("created")
        return float(value) if isinstance(value, int | float) else 0.0


def read_row(site: Site, name: str) -> RunRow:
    """The run's row: pass rates by strategy (trials whose returned candidate passed held-out,
    over its trials), tokens, and what `compare` would say of the folder."""
    try:
        config, results = site.config(name), site.results(name)
    except (UsageError, ValueError, OSError) as exc:
        return RunRow(name, error=f"unreadable: {exc}")
    order = list(dict.fromkeys([*config.get("strategies", ()), *(r.strategy for r in results)]))
    rates = {s: _rate([r for r in results if r.strategy == s]) for s in order}
    return RunRow(
        name,
        config,
        {s: v for s, v in rates.items() if v is not None},
        Counter(r.strategy for r in results),
        sum(r.input_tokens + r.output_tokens for r in results),
        len(results),
        len({r.task_id for r in results}),
        refusal(site, name, config),
        state=run_state(site.run(name), config, results).note(),
    )


def _rate(results: list[TaskResult]) -> float | None:
    return sum(r.final_passed for r in results) / len(results) if results else None


def refusal(site: Site, name: str, config: dict[str, Any]) -> str:
    """What `compare` says when it refuses to resume this folder ("" when it would not)."""
    from reflexion.runner.setup import check_version

    try:
        check_version(RunFolder(site.run(name)), config)
    except UsageError as exc:
        return str(exc)
    return ""


# column -> (header, the sort key, whether its first click sorts high to low)
SORTS: dict[str, tuple[str, Callable[[RunRow], Any], bool]] = {
    "run": ("run", lambda r: r.name, False),
    "best": ("best final", lambda r: r.best[1] if r.best else -1.0, True),
    "tokens": ("tokens", lambda r: r.tokens, True),
    "trials": ("trials", lambda r: r.trials, True),
    "date": ("created", lambda r: r.created, True),
}


def runs_page(site: Site, sort: str = "date", desc: bool = True) -> str:
    """Every run, sorted by `sort` (a key of SORTS), high to low with `desc`."""
    rows = [read_row(site, name) for name in site.runs]
    readable = sorted((r for r in rows if not r.error), key=SORTS[sort][1], reverse=desc)
    cells = [_cells(r) for r in readable] + [_broken(r) for r in rows if r.error]
    by = {key: _sort_link(key, sort, desc) for key in SORTS}
    head = [by["run"], by["best"], "env", "model", "pass rates (final)", by["tokens"]]
    head += ["tok/trial", by["trials"], by["date"], ""]
    body = [_diff_form(site), table(head, cells, cls="runs")]
    return page("Runs", *body)


def _cells(r: RunRow) -> list[object]:
    best = r.best
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.created)) if r.created else ""
    # a run not at its end: each rate with its trials, which differ by strategy
    counts = r.counts if r.state else {}
    rates = [
        f"{s} {v:.1%}" + (f" ({counts[s]} trials)" if s in counts else "")
        for s, v in r.rates.items()
    ]
    warn = (
        tag("span", "\u26a0 compare would refuse it: ", r.warning, cls="warn") if r.warning else ""
    )
    state = tag("div", r.state, cls="state") if r.state else ""
    return [
        join([link(url("runs", r.name), r.name), state]),
        "" if best is None else join([tag("strong", f"{best[1]:.1%}"), f" {best[0]}"]),
        r.config.get("env", "?"),
        r.config.get("model") or "none",
        " · ".join(rates) or "no trial finished",
        f"{r.tokens:,}",
        f"{r.tokens / r.trials:,.0f}" if r.trials and r.tokens else "",
        str(r.trials),
        when,
        warn,
    ]


def _broken(r: RunRow) -> list[object]:
    return [r.name, tag("span", r.error, cls="warn"), "", "", "", "", "", "", "", ""]


def _sort_link(key: str, sort: str, desc: bool) -> Html:
    """A header that sorts by its column; on the column sorted now, it turns the order."""
    title, _, high_first = SORTS[key]
    down = (not desc) if key == sort else high_first
    arrow = (" \u25bc" if desc else " \u25b2") if key == sort else ""
    return link(url("", sort=key, desc="1" if down else "0"), title + arrow)


def _diff_form(site: Site) -> Html:
    """Pick two runs of the same tasks: /diff?a=...&b=... (what `reflexion diff` prints)."""
    names = list(site.runs)
    if len(names) < 2:
        return join([])
    return tag(
        "form",
        "Set two runs side by side: A ",
        _select("a", names, names[0]),
        " B ",
        _select("b", names, names[1]),
        " ",
        tag("button", "Diff", type="submit"),
        action="/diff",
        method="get",
        cls="pick",
    )


def _select(name: str, options: list[str], chosen: str) -> Html:
    items = [
        tag("option", o, value=o, **({"selected": "selected"} if o == chosen else {}))
        for o in options
    ]
    return tag("select", *items, name=name, aria_label=f"run {name.upper()}")
