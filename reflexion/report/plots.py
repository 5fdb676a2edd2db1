"""PNG plots of a run: success vs episode, success vs cost, and (--order stream) success by
position in the stream, one line per strategy.

matplotlib is imported inside the functions (Agg backend, no display), so `import reflexion`
stays light:

    >>> plot_by_episode(path, [("reflexion", curve)], "quadratic, 8 tasks")     # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reflexion.core.errors import UsageError
from reflexion.report.stats import Curve

if TYPE_CHECKING:
    from reflexion.report.stream import StreamCurve

Series = Sequence[tuple[str, Curve]]
# Each strategy gets a marker and a dash as well as a colour: strategies that behave the same
# (self-refine and reflexion-window on the drill) draw the same line, and must stay visible.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DASHES = ("-", "--", "-.", ":")


def plot_by_episode(path: Path, series: Series, subtitle: str) -> Path:
    """Success vs episode with 95% intervals over tasks as error bars, saved as a PNG at `path`.
    Episodes are discrete, so each strategy's bars are nudged sideways instead of drawn as
    overlapping shaded bands, and strategies with equal numbers stay apart.

    >>> plot_by_episode(Path("by_episode.png"), series, "quadratic")  # doctest: +SKIP
    """
    fig, ax = _figure()
    width = min(0.5, 0.08 * len(series))
    for i, (name, curve) in enumerate(series):
        nudge = (i / max(len(series) - 1, 1) - 0.5) * width
        x = [v + nudge for v in curve.x]
        below = [y - lo for y, lo in zip(curve.y, curve.low, strict=True)]
        above = [hi - y for y, hi in zip(curve.y, curve.high, strict=True)]
        ax.errorbar(
            x,
            curve.y,
            yerr=[below, above],
            label=_plain(name),
            capsize=3,
            elinewidth=1.2,
            **_style(i),
        )
    episodes = max((len(c.x) for _, c in series), default=1)
    ax.set_xticks(range(1, episodes + 1))
    ax.set_xlim(0.6, episodes + 0.4)
    ax.set_xlabel("episode (candidates produced so far)")
    _finish(fig, ax, path, "Success vs episode", subtitle, "bars: 95% CI over tasks")
    return path


def plot_by_cost(path: Path, series: Series, unit: str | None, subtitle: str) -> Path:
    """Success vs cumulative cost (a step function), saved as a PNG at `path`; with no cost
    recorded (`unit` None: a scripted actor) the plot says so instead of drawing flat lines.

    >>> plot_by_cost(Path("by_tokens.png"), series, "tokens", "humaneval")  # doctest: +SKIP
    """
    fig, ax = _figure()
    if unit is None:
        note = "No tokens or LLM calls were recorded\n(a scripted actor): no cost axis to plot."
        ax.text(0.5, 0.5, note, ha="center", va="center", transform=ax.transAxes, fontsize=12)
        ax.set_xticks([])
        ax.set_xlabel("cost")
    else:
        for i, (name, curve) in enumerate(series):
            # one marker, at the right edge: a step every few tokens would smear markers into a
            # thick line; the dashes tell the lines apart, the marker ties each to the legend
            style = _style(i) | {"drawstyle": "steps-post", "markevery": [len(curve.x) - 1]}
            ax.plot(curve.x, curve.y, label=_plain(name), **style)
        ax.set_xlim(left=0)
        ax.set_xlabel(f"budget: cumulative {unit} per trial")
    _finish(fig, ax, path, f"Success vs {unit or 'cost'}", subtitle, "")
    return path


def plot_by_position(path: Path, curves: Sequence[StreamCurve], subtitle: str) -> Path:
    """Running held-out success by position in the stream (--order stream), saved as a PNG at
    `path`: the y at x = n is the success rate over the stream's first n tasks.

    >>> plot_by_position(Path("by_position.png"), curves, "quadratic")  # doctest: +SKIP
    """
    fig, ax = _figure()
    from matplotlib.ticker import MaxNLocator

    n = max((c.positions[-1] for c in curves if c.positions), default=1)
    for i, c in enumerate(curves):
        # a marker every tenth of the stream: one per task would smear into a thick line
        style = _style(i) | {"markevery": max(1, len(c.positions) // 10)}
        ax.plot(c.positions, c.rates, label=_plain(c.strategy), **style)
    ax.set_xlim(0.5, n + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("position in the stream (tasks done so far)")
    ylabel = "held-out success over the tasks so far"
    _finish(fig, ax, path, "Success by position in the stream", subtitle, "", ylabel)
    return path


def _figure() -> tuple[Any, Any]:
    try:
        import matplotlib
    except ImportError:
        msg = (
            "the report's plots need matplotlib: pip install matplotlib, "
            "then rebuild them with `reflexion report RUN`"
        )
        raise UsageError(msg) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=120)
    return fig, ax


def _style(i: int) -> dict[str, Any]:
    return {
        "marker": MARKERS[i % len(MARKERS)],
        "linestyle": DASHES[i % len(DASHES)],
        "linewidth": 2,
        "markersize": 6,
    }


def _finish(
    fig: Any,
    ax: Any,
    path: Path,
    title: str,
    subtitle: str,
    note: str,
    ylabel: str = "held-out success of the best-so-far",
) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    ax.set_ylim(-0.03, 1.03)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title}\n{_plain(subtitle)}", fontsize=11)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        title = f"strategy\n({note})" if note else "strategy"
        ax.legend(title=title, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def _plain(text: str) -> str:
    """Text shown as typed: matplotlib would read `$...$` in a name as math."""
    return text.replace("$", r"\$")
