"""Per-strategy summaries of a run: rates with intervals, costs, curves, and the table.

>>> print(format_table(summarize(results)))        # doctest: +SKIP
strategy     trials  final [95% CI]   any [95% CI]  mean best  attempts  tok/solved  ...
self-refine      60   75.0% [65-85]  75.0% [65-85]     -0.013      2.43       2,820  ...
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reflexion.core.records import Point, Record, TaskResult
from reflexion.models.prices import Pricing
from reflexion.report.stats import (
    RESAMPLES,
    Curve,
    cost_curve,
    cost_of,
    cost_unit,
    episode_curve,
    passed_at,
    per_solved,
    success_rate,
)

NO_CURVE = Curve((), (), (), ())


@dataclass(frozen=True)
class Summary(Record):
    """One strategy's row of the comparison, with the curves behind its plots."""

    strategy: str
    trials: int  # tasks x seeds
    tasks: int
    final_success: float  # held-out pass rate of the candidate each strategy returns
    final_low: float  # bootstrap 95% interval over tasks
    final_high: float
    any_success: float  # held-out pass rate of any attempt (optimistic)
    any_low: float
    any_high: float
    mean_best_score: float  # mean best VISIBLE score
    mean_attempts: float
    llm_calls: int
    tokens: int
    tokens_per_solved: float | None  # all tokens / trials whose returned candidate passed
    calls_per_solved: float | None
    mean_tokens: float  # per trial
    mean_calls: float
    wall_s: float  # summed over trials (trials overlap when run concurrently)
    cost_unit: str | None = None  # the x of by_cost: "tokens", "LLM calls", or None (no cost)
    # --task-tokens T: final success counting only what was done within T tokens per trial
    token_limit: int | None = None
    at_tokens: float | None = None
    at_tokens_low: float | None = None
    at_tokens_high: float | None = None
    by_episode: Curve = NO_CURVE
    by_cost: Curve = NO_CURVE
    input_tokens: int = 0
    output_tokens: int = 0
    # money: input_tokens * price in + output_tokens * price out, per million (--price, or the
    # price table's for an API model); None with `cost_note` saying why (a local model, ...)
    cost_usd: float | None = None
    cost_note: str = ""


def summarize(
    results: Sequence[TaskResult],
    order: Sequence[str] = (),
    episodes: int | None = None,
    resamples: int = RESAMPLES,
    task_tokens: int | None = None,
    pricing: Pricing | None = None,
) -> list[Summary]:
    """One Summary per strategy, in `order` first, then in order of appearance. The cost curves
    share one unit and right edge, so they can be drawn on one axis; `pricing` (see
    reflexion.models.prices) gives the cost in money.

    >>> [s.strategy for s in summarize(results, ["reflexion"])]        # doctest: +SKIP
    ['reflexion', 'self-refine']
    """
    names = list(dict.fromkeys([*order, *(r.strategy for r in results)]))
    episodes = episodes or max((p.episode for r in results for p in r.curve), default=1)
    unit = cost_unit(results)
    budget = max((cost_of(p, unit) for r in results for p in r.curve), default=0) if unit else 0
    out = []
    for name in names:
        rs = [r for r in results if r.strategy == name]
        if rs:
            by_cost = cost_curve(rs, unit, budget, resamples) if unit else NO_CURVE
            summary = _summary(
                name, rs, resamples, unit, episode_curve(rs, episodes, resamples), by_cost
            )
            summary = _at_tokens(summary, rs, task_tokens, resamples) if task_tokens else summary
            out.append(priced(summary, pricing) if pricing else summary)
    return out


def priced(summary: Summary, pricing: Pricing) -> Summary:
    """The summary with its cost in money, or the reason it has none.

    >>> s = priced(summarize(results)[0], Pricing(Price(2.5, 10)))          # doctest: +SKIP
    >>> s.cost_usd == s.input_tokens * 2.5 / 1e6 + s.output_tokens * 10 / 1e6  # doctest: +SKIP
    True
    """
    if pricing.price is None or summary.llm_calls == 0:
        note = "no model" if summary.llm_calls == 0 else pricing.note
        return dataclasses.replace(summary, cost_usd=None, cost_note=note)
    cost = pricing.price.of(summary.input_tokens, summary.output_tokens)
    return dataclasses.replace(summary, cost_usd=cost, cost_note="")


def _at_tokens(summary: Summary, rs: list[TaskResult], limit: int, resamples: int) -> Summary:
    """The summary with final success counted at `limit` tokens per trial: an attempt that
    ended past it does not count, even if the last call that crossed it was let finish."""

    def made_at(p: Point) -> float:  # the attempt's own cost, not later calls charged to it
        return p.attempt_tokens if p.attempt_tokens is not None else p.tokens

    rate = success_rate(rs, lambda r: passed_at(r.curve, made_at, limit, r.final_passed), resamples)
    return dataclasses.replace(
        summary,
        token_limit=limit,
        at_tokens=rate.value,
        at_tokens_low=rate.low,
        at_tokens_high=rate.high,
    )


def _summary(
    name: str,
    rs: list[TaskResult],
    resamples: int,
    unit: str | None,
    by_episode: Curve,
    by_cost: Curve,
) -> Summary:
    n = len(rs)
    final = success_rate(rs, lambda r: r.final_passed, resamples)
    anyp = success_rate(rs, lambda r: r.any_passed, resamples)
    tokens_in, tokens_out = sum(r.input_tokens for r in rs), sum(r.output_tokens for r in rs)
    tokens = tokens_in + tokens_out
    calls = sum(r.llm_calls for r in rs)
    return Summary(
        strategy=name,
        trials=n,
        tasks=len({r.task_id for r in rs}),
        final_success=final.value,
        final_low=final.low,
        final_high=final.high,
        any_success=anyp.value,
        any_low=anyp.low,
        any_high=anyp.high,
        mean_best_score=sum(r.best_score for r in rs) / n,
        mean_attempts=sum(r.attempts for r in rs) / n,
        llm_calls=calls,
        tokens=tokens,
        tokens_per_solved=per_solved(rs, lambda r: r.input_tokens + r.output_tokens),
        calls_per_solved=per_solved(rs, lambda r: r.llm_calls),
        mean_tokens=tokens / n,
        mean_calls=calls / n,
        wall_s=round(sum(r.wall_s for r in rs), 3),
        cost_unit=unit,
        by_episode=by_episode,
        by_cost=by_cost,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
    )


COLUMNS: tuple[str, ...] = ("strategy", "trials", "final [95% CI]", "any [95% CI]")
COLUMNS += ("mean best", "attempts", "tok/trial", "tok/solved", "calls/solved", "wall s", "cost")


def table_rows(summaries: Sequence[Summary], digits: int = 0) -> list[tuple[str, ...]]:
    """The table's cells as text; `digits` is the precision of the interval ends (in %).

    >>> table_rows(summarize(results))[0][2]        # doctest: +SKIP
    '62.5% [25-88]'
    """

    def rate(value: float, low: float, high: float) -> str:
        return f"{value:.1%} [{low * 100:.{digits}f}-{high * 100:.{digits}f}]"

    def cost(s: Summary, value: float | None, fmt: str) -> str:
        if s.llm_calls == 0:
            return "no model"  # a scripted actor: not free, just not counted
        return "n/a" if value is None else format(value, fmt)

    def at_tokens(s: Summary) -> tuple[str, ...]:
        if s.at_tokens is None or s.at_tokens_low is None or s.at_tokens_high is None:
            return ()
        return (rate(s.at_tokens, s.at_tokens_low, s.at_tokens_high),)

    return [
        (
            s.strategy,
            str(s.trials),
            rate(s.final_success, s.final_low, s.final_high),
            rate(s.any_success, s.any_low, s.any_high),
            f"{s.mean_best_score:.4g}",
            f"{s.mean_attempts:.2f}",
            cost(s, s.mean_tokens, ",.0f"),
            cost(s, s.tokens_per_solved, ",.0f"),
            cost(s, s.calls_per_solved, ".1f"),
            f"{s.wall_s:.2f}",
            money(s),
            *at_tokens(s),
        )
        for s in summaries
    ]


def money(s: Summary) -> str:
    """The cost cell: dollars, or why there are none ("local model: no money cost")."""
    if s.llm_calls == 0:
        return "no model"  # a scripted actor: not free, just not counted
    if s.cost_usd is None:
        return s.cost_note or "no price"
    return dollars(s.cost_usd)


def dollars(value: float) -> str:
    """US dollars, with cents, or more digits for a sum under one dollar.

    >>> dollars(1234.5), dollars(0.0123), dollars(0.000042)
    ('$1,234.50', '$0.0123', '$0.000042')
    """
    digits = 2 if value >= 1 else 4 if value >= 0.01 else 6
    return f"${value:,.{digits}f}"


def header(summaries: Sequence[Summary], columns: Sequence[str] = COLUMNS) -> tuple[str, ...]:
    """`columns`, plus success at the token budget per task when the run had one."""
    limits = {s.token_limit for s in summaries if s.token_limit is not None}
    return (*columns, *(f"final @ {limit:,} tok" for limit in limits))


def format_table(summaries: Sequence[Summary]) -> str:
    """The comparison as aligned plain text, one row per strategy (see the module example)."""
    return align(header(summaries), table_rows(summaries))


def align(header: Sequence[str], cells: Sequence[Sequence[str]], left: int = 1) -> str:
    """Rows of cells as plain text: the first `left` columns (names) left-aligned, the others
    (numbers) right-aligned.

    >>> print(align(("name", "n"), [("a", "10")]))
    name   n
    a     10
    """
    rows = [header, *cells]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            v.ljust(w) if i < left else v.rjust(w)
            for i, (v, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    )


FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)  # a fenced block, closed or cut off


def groups_of(value: object) -> tuple[str, ...]:
    """The groups a task's spec value puts it in: a list's every item (the SQL env's `needs`:
    a question that needs cents and a join counts under both), else the value itself.

    >>> groups_of(["cents", "join"]), groups_of("easy"), groups_of(None)
    (('cents', 'join'), ('easy',), ('?',))
    """
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value) or ("(none)",)
    return ("?",) if value is None else (str(value),)


def by_field(
    results: Sequence[TaskResult], labels: Sequence[str], spec: Mapping[str, tuple[str, ...]]
) -> str:
    """Each arm's final successes out of its tasks in each group (`spec`: task -> its groups).

    >>> r = TaskResult("r", "e", "t1", "a", 0, "x", 1.0, 1, True, True, 1, 1, 10, 5, 1.0)
    >>> print(by_field([r], ["a"], {"t1": ("easy",), "t2": ("hard",)}))
    arm  easy  hard
    a     1/1   0/0
    """
    groups = sorted({g for gs in spec.values() for g in gs})
    cells = []
    for label in labels:
        mine = [r for r in results if r.strategy == label]
        row = [label]
        for g in groups:
            picked = [r for r in mine if g in spec.get(r.task_id, ())]
            row.append(f"{sum(r.final_passed for r in picked)}/{len(picked)}")
        cells.append(row)
    return align(("arm", *groups), cells)


def prose_words(answer: str) -> int:
    """Words of an answer outside its fenced blocks: the reasoning around a query or program.

    >>> prose_words("First the join.\\n```sql\\nSELECT 1\\n```")
    3
    """
    return len(FENCED.sub("", answer).split())


def by_form(results: Sequence[TaskResult], labels: Sequence[str], words: int) -> str:
    """Each arm's final answers that reason (more than `words` words outside fenced blocks)
    against bare ones, how many of each were right, and the mean output tokens.

    >>> r = TaskResult("r", "e", "t1", "a", 0, "SELECT 1", 1.0, 1, True, True, 1, 1, 10, 5, 1.0)
    >>> by_form([r], ["a"], 15).splitlines()[1].split()
    ['a', '0/0', '1/1', '5']
    """
    cells = []
    for label in labels:
        mine = [r for r in results if r.strategy == label]
        reasoned = [r for r in mine if prose_words(r.best_candidate) > words]
        bare = [r for r in mine if prose_words(r.best_candidate) <= words]
        out = sum(r.output_tokens for r in mine) / max(1, len(mine))
        right = [sum(r.final_passed for r in part) for part in (reasoned, bare)]
        cells.append(
            [label, f"{right[0]}/{len(reasoned)}", f"{right[1]}/{len(bare)}", f"{out:.0f}"]
        )
    head = ("arm, final answers", f"reasoned (> {words} words), right", "bare, right")
    return align((*head, "output tokens / trial"), cells)
