"""A run's comparisons at a glance: every strategy against every other as one matrix of paired
differences (row minus column, in points, on the same tasks), coloured by the McNemar p-value,
with each pair's full row (interval, won, lost, p, tokens) on hover; and success by episode,
one row per episode.

    >>> pairs = all_pairs(results, ["single", "reflexion"])       # doctest: +SKIP
    >>> "+12.5" in pair_matrix(pairs, ["single", "reflexion"])    # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Sequence

from reflexion.report.paired import PAIR_COLUMNS, Pair, pair_rows
from reflexion.report.summary import Summary
from reflexion.web.layout import Html, join, table, tag

# p-value bands, strongest first: the cell's colour says how sure the difference is
BANDS = ((0.01, "p01"), (0.05, "p05"), (0.10, "p10"))

MATRIX_TEXT = (
    "Each cell is the row's final success minus the column's, in percentage points, on the tasks "
    "both ran (a task's seeds averaged first), with the exact McNemar p-value of the tasks one "
    "won and the other lost. Green: the row did better; red: worse; the deeper the colour, the "
    "smaller p (below 0.01, 0.05, 0.10); grey: p of 0.10 or more, no evidence either way. Hover "
    "a cell for its interval, won, lost, tied and tokens."
)


def pair_matrix(pairs: Sequence[Pair], names: Sequence[str]) -> Html:
    """Rows and columns are the strategies in `names`; the cell of (b, a) is b - a."""
    by_cell: dict[tuple[str, str], tuple[Pair, int, str]] = {}
    for p, text in zip(pairs, pair_rows(pairs), strict=True):
        detail = ", ".join(f"{h} {c}" for h, c in zip(PAIR_COLUMNS[1:], text[1:], strict=True))
        title = f"{text[0]}: {detail}"
        by_cell[(p.b, p.a)] = (p, 1, title)
        by_cell[(p.a, p.b)] = (p, -1, title)
    shown = [n for n in names if any(n in key for key in by_cell)]
    head = tag("tr", tag("th", "row \u2212 column"), *(tag("th", n, scope="col") for n in shown))
    rows = []
    for row in shown:
        cells = [tag("th", row, scope="row")]
        for col in shown:
            found = by_cell.get((row, col))
            cells.append(_cell(row, col, found) if found else tag("td", "", cls="self"))
        rows.append(tag("tr", *cells))
    return tag("table", tag("thead", head), tag("tbody", *rows), cls="matrix")


def _cell(row: str, col: str, found: tuple[Pair, int, str]) -> Html:
    p, sign, title = found
    points = sign * p.difference * 100 + 0.0  # + 0.0: no -0.0
    band = next((name for limit, name in BANDS if p.p_value < limit), "p100")
    side = "up" if points > 0 else "down" if points < 0 else "even"
    return tag(
        "td",
        f"{points:+.1f}",
        tag("small", f"p {p.p_value:.2f}"),
        cls=f"{band} {side}",
        title=title,
        data_row=row,
        data_col=col,
        data_p=f"{p.p_value:.4f}",
    )


def episode_table(summaries: Sequence[Summary]) -> Html:
    """Final success after each episode, one column per strategy, with its 95% interval."""
    episodes = sorted({int(x) for s in summaries for x in s.by_episode.x})
    rows = []
    for e in episodes:
        cells: list[object] = [str(e)]
        for s in summaries:
            curve = s.by_episode
            i = next((i for i, x in enumerate(curve.x) if int(x) == e), None)
            cells.append(
                ""
                if i is None
                else f"{curve.y[i]:.1%} [{curve.low[i] * 100:.0f}-{curve.high[i] * 100:.0f}]"
            )
        rows.append(cells)
    return table(("after episode", *(s.strategy for s in summaries)), rows, cls="episodes")


def legend() -> Html:
    """The matrix's colours, as swatches."""
    swatches = [
        tag("span", text, cls=f"{band} {side} swatch")
        for band, side, text in (
            ("p01", "up", "row better, p < 0.01"),
            ("p05", "up", "p < 0.05"),
            ("p10", "up", "p < 0.10"),
            ("p100", "even", "p \u2265 0.10"),
            ("p10", "down", "p < 0.10"),
            ("p05", "down", "p < 0.05"),
            ("p01", "down", "row worse, p < 0.01"),
        )
    ]
    return tag("p", join(swatches, " "), cls="legend")
