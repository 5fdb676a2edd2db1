"""Two runs of the same tasks side by side (`/diff?a=RUN&b=RUN`): what `reflexion diff RUN_A
RUN_B` prints, as a page. Each strategy of B against the same strategy of A, paired by task, the
tasks B won and lost (linked to each run's task page), and the runtime's work per role.

    >>> diff_page(site, "before", "after")       # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence

from reflexion.core.errors import UsageError
from reflexion.report.runs_diff import (
    DIFF_COLUMNS,
    WORK_COLUMNS,
    RunsDiff,
    StrategyDiff,
    diff_rows,
    diff_runs,
    work_rows,
)
from reflexion.web.layout import Html, join, link, page, table, tag, url
from reflexion.web.site import Site


def diff_page(site: Site, a: str, b: str) -> tuple[str, int]:
    """The page, and its status: 400 with `diff`'s one-line refusal when the two runs cannot be
    paired (other tasks, no finished trial)."""
    title = f"{b} against {a}"
    crumbs = [(url("diff", a=a, b=b), title)]
    try:
        d = diff_runs(site.run(a), site.run(b))
    except UsageError as exc:
        body = [tag("p", f"These two runs cannot be diffed: {exc}", cls="warn")]
        return page(title, *body, tag("p", link("/", "All runs")), crumbs=crumbs), 400
    return page(title, *_body(d, a, b), crumbs=crumbs), 200


def _body(d: RunsDiff, a: str, b: str) -> list[object]:
    differ = ", ".join(d.settings) if d.settings else "none"
    body: list[object] = [
        tag(
            "ul",
            tag("li", "A = ", link(url("runs", a), a), f" ({d.a})"),
            tag("li", "B = ", link(url("runs", b), b), f" ({d.b})"),
            tag("li", f"env {d.env}; settings that differ: {differ}"),
            cls="sides",
        )
    ]
    if d.only:
        body.append(tag("p", f"In one run only (not compared): {', '.join(d.only)}", cls="note"))
    if not d.strategies:
        body.append(tag("p", "No strategy ran in both: nothing to pair.", cls="note"))
        return body
    body += [
        tag("h2", "Each strategy of B against the same strategy of A, paired by task"),
        table(DIFF_COLUMNS, diff_rows(d.strategies), cls="diff"),
        tag("h2", "Tasks B won and lost"),
        tag("ul", *(_changed(x, a, b) for x in d.strategies), cls="changed"),
    ]
    works = [w for x in d.strategies for w in x.work]
    if works:
        body += [
            tag("h2", "The runtime's work per role"),
            table(WORK_COLUMNS, work_rows(works), cls="work"),
            tag("p", WORK_TEXT, cls="note"),
        ]
    return body


WORK_TEXT = (
    "Model calls (the run's own cache aside), output tokens, prompt tokens the runtime "
    "processed, and the share of prompt tokens served from its prefix cache."
)


def _changed(x: StrategyDiff, a: str, b: str) -> Html:
    def tasks(ids: Sequence[str]) -> Html:
        if not ids:
            return join(["none"])
        return join([_task_link(t, a, b) for t in ids], ", ")

    return tag("li", tag("strong", x.strategy), ": won ", tasks(x.won), "; lost ", tasks(x.lost))


def _task_link(task_id: str, a: str, b: str) -> Html:
    """The task, with a link to its page in each run."""
    return join(
        [
            task_id,
            " (",
            link(url("runs", a, "tasks", task_id), "A"),
            " ",
            link(url("runs", b, "tasks", task_id), "B"),
            ")",
        ]
    )
