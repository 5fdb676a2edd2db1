"""A run's tasks, one row each with every strategy's held-out verdict (its first seed), filtered
by verdict and strategy from a form (`?verdict=failed&strategy=reflexion#tasks`):

- `passed` or `failed` with a strategy: the tasks that strategy passed (or failed);
- `passed` or `failed` alone: the tasks every strategy passed (or failed);
- `split`: the tasks the strategies disagree on (with a strategy: where it differs from another).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from reflexion.core.records import TaskResult
from reflexion.web.layout import Html, join, link, table, tag, url
from reflexion.web.site import NotFound

VERDICTS = ("passed", "failed", "split")


def task_rows(results: Sequence[TaskResult]) -> dict[str, dict[str, TaskResult]]:
    """task -> strategy -> its trial of the first seed, in the order the results came."""
    by_task: dict[str, dict[str, TaskResult]] = defaultdict(dict)
    first_seed = min(r.seed for r in results)
    for r in results:
        if r.seed == first_seed:
            by_task[r.task_id][r.strategy] = r
    return by_task


def keep(done: dict[str, TaskResult], verdict: str, strategy: str) -> bool:
    """Whether a task's row passes the filter (see the module's list)."""
    verdicts = {s: r.final_passed for s, r in done.items()}
    if strategy and strategy not in verdicts:
        return False
    if verdict == "split":
        mine = [verdicts[strategy]] if strategy else list(verdicts.values())
        return any(v != m for v in verdicts.values() for m in mine)
    if verdict in ("passed", "failed"):
        wanted = verdict == "passed"
        return (
            verdicts[strategy] == wanted
            if strategy
            else all(v == wanted for v in verdicts.values())
        )
    return True


def task_list(
    name: str, results: Sequence[TaskResult], order: Sequence[str], verdict: str, strategy: str
) -> list[Html]:
    """The filter form, how many tasks it shows, and their rows."""
    if verdict and verdict not in VERDICTS:
        msg = f"verdict must be one of {', '.join(VERDICTS)}, got {verdict[:40]!r}"
        raise NotFound(msg)
    by_task = task_rows(results)
    strategies = [s for s in order if any(s in v for v in by_task.values())]
    if strategy and strategy not in strategies:
        msg = f"strategy must be one of {', '.join(strategies)}, got {strategy[:40]!r}"
        raise NotFound(msg)
    rows = []
    for task_id, done in by_task.items():
        if keep(done, verdict, strategy):
            cells: list[object] = [link(url("runs", name, "tasks", task_id), task_id)]
            cells += ["" if s not in done else verdict_cell(done[s]) for s in strategies]
            rows.append(cells)
    seed = min(r.seed for r in results)
    count = f"{len(rows)} of {len(by_task)} tasks (seed {seed})"
    return [
        _form(name, strategies, verdict, strategy),
        tag("p", count, cls="note count"),
        table(("task", *strategies), rows, cls="tasks"),
    ]


def verdict_cell(r: TaskResult) -> Html:
    word, cls = ("passed", "pass") if r.final_passed else ("failed", "fail")
    return join([tag("span", word, cls=cls), f" ({attempts(r.attempts)})"])


def attempts(n: int) -> str:
    """How many attempts, in words.

    >>> attempts(1), attempts(3)
    ('1 attempt', '3 attempts')
    """
    return f"{n} attempt" + "s" * (n != 1)


def _form(name: str, strategies: Sequence[str], verdict: str, strategy: str) -> Html:
    verdicts = [("", "any verdict"), *((v, v) for v in VERDICTS)]
    options = [("", "every strategy"), *((s, s) for s in strategies)]
    return tag(
        "form",
        tag("label", "Show tasks ", choose("verdict", verdicts, verdict)),
        tag("label", " of ", choose("strategy", options, strategy)),
        " ",
        tag("button", "Filter", type="submit"),
        action=url("runs", name) + "#tasks",
        method="get",
        cls="filter",
    )


def choose(name: str, options: Sequence[tuple[str, str]], chosen: str) -> Html:
    """A <select> of (value, text) options, `chosen` selected."""
    items = [
        tag("option", text, value=value, **({"selected": "selected"} if value == chosen else {}))
        for value, text in options
    ]
    return tag("select", *items, name=name)
