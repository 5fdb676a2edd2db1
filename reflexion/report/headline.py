"""One line that says what a comparison found, read from its paired statistics: which strategy
beat which (McNemar p < ALPHA, the level the paired tables and the page's matrix use), or that
none differed, and what each cost in tokens against the first strategy. A run still going, or
stopped before its end, says so first: its numbers are not the run's.

    >>> p = Pair("single", "resample", 20, .085, .03, .14, 14, 0, 6, 1.2e-4, 3.9, 3.5, 4.3, 9)
    >>> print(headline([], [p]))
    resample beat single by +8.5 points on 20 tasks (14 won, 0 lost, p = 0.00012), 3.9x the tokens
    >>> p = Pair("single", "reflexion", 20, 0.0, 0.0, 0.0, 0, 0, 20, 1.0, 2.1, 2.0, 2.2, None)
    >>> print(headline([], [p]))
    no strategy differed on 20 tasks (all solved the same); reflexion cost 2.1x single's tokens
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reflexion.report.paired import Pair
from reflexion.report.summary import Summary

ALPHA = 0.05  # as PAIRED_TEXT's "tasks to separate" and the matrix's colour bands
SHOWN = 3  # significant pairs named in the line; the paired table holds the rest


def headline(summaries: Sequence[Summary], pairs: Sequence[Pair], state: str = "") -> str:
    """The line (see the module example); `state`: a run still going or stopped ("in progress:
    2 of 5 trials"), said first. A run of one strategy has no pair: its rate."""
    prefix = f"{state}; so far, " if state else ""
    if not pairs:
        if not summaries:
            return prefix + "no trial finished"
        s = summaries[0]
        return (
            prefix + f"one strategy, {s.strategy}: {s.final_success:.1%} final on {s.tasks} tasks"
        )
    tasks = max(p.tasks for p in pairs)
    found = sorted((p for p in pairs if p.p_value < ALPHA), key=lambda p: p.p_value)
    if found:
        named = "; ".join(_beat(p) for p in found[:SHOWN])
        more = len(found) - SHOWN
        rest = f"; and {more} more pairs (see the paired table)" if more > 0 else ""
        return prefix + named + rest
    if all(p.won == p.lost == 0 for p in pairs):
        line = f"no strategy differed on {tasks} tasks (all solved the same)"
    else:
        close = min(pairs, key=lambda p: p.p_value)
        line = (
            f"no strategy differed significantly on {tasks} tasks (closest: {close.b} vs "
            f"{close.a}, {_points(close)}, {close.won} won, {close.lost} lost, "
            f"p = {close.p_value:.2g})"
        )
    return prefix + line + _costs(pairs)


def _beat(p: Pair) -> str:
    """`b` beat `a` (or the other way round), with the paired numbers and the token ratio."""
    if p.difference >= 0:
        winner, loser, won, lost, ratio = p.b, p.a, p.won, p.lost, p.token_ratio
    else:
        winner, loser, won, lost = p.a, p.b, p.lost, p.won
        ratio = 1 / p.token_ratio if p.token_ratio else None
    points = f"{abs(p.difference) * 100:+.1f} points"
    line = f"{winner} beat {loser} by {points} on {p.tasks} tasks ({won} won, {lost} lost, "
    line += f"p = {p.p_value:.2g})"
    return line + (f", {ratio:.1f}x the tokens" if ratio is not None else "")


def _points(p: Pair) -> str:
    return f"{p.difference * 100:+.1f} points"


def _costs(pairs: Sequence[Pair]) -> str:
    """Each strategy's tokens as a multiple of the first one's ("" without token counts)."""
    base = pairs[0].a
    against = [p for p in pairs if p.a == base and p.token_ratio is not None]
    if not against:
        return ""
    ratios = ", ".join(f"{p.b} {p.token_ratio:.1f}x" for p in against)
    if len(against) == 1:
        return f"; {against[0].b} cost {against[0].token_ratio:.1f}x {base}'s tokens"
    return f"; tokens against {base}: {ratios}"


def spent(config: Mapping[str, Any]) -> str:
    """The wall time the run really took, once (config.json's `spent_s`, summed over its
    sessions), beside the `wall s` column, which charges each strategy what it would take alone.

    >>> spent({"spent_s": 12.345})
    'wall time spent: 12.3 s (a reused answer is charged to each strategy as if computed alone)'
    """
    seconds = config.get("spent_s")
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return ""
    return (
        f"wall time spent: {seconds:.1f} s (a reused answer is charged to each strategy as if "
        "computed alone)"
    )
