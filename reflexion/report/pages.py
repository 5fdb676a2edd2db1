"""report.md and a self-contained report.html (images inlined as data URIs, no external files).

Both render the same `Page`; every piece of text is escaped, since strategy, task and env names
come from users:

    >>> page = Page("Run abc", [("env", "quadratic")], ("strategy",), [("self-refine",)], [])
    >>> "<td>self-refine</td>" in render_html(page)
    True
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HOW_TO_READ = (
    "**Final** success is the held-out pass rate of the candidate each strategy returns (its "
    "best by the visible score): the number to report. **Any-attempt** success counts a task as "
    "solved when any candidate passed held-out; it is optimistic, because picking that candidate "
    "needs the held-out answer. The intervals in [brackets] and the error bars of the episode "
    "plot are bootstrap 95% intervals over tasks (a task's seeds are averaged first): they say "
    "how much a number would move on another draw of similar tasks, not how noisy the model is. "
    "Tokens per trial divide every token (input and output) by the trials. Tokens and LLM calls "
    "per solved task divide the cost of every trial, solved or not, by the trials whose returned "
    "candidate passed (n/a when none passed). Cost is in US dollars at the run's --price (or the "
    "price table's list price of its API model): a local model costs tokens and seconds, not "
    "money. The curves follow the best-so-far candidate: a "
    "trial that stopped early keeps its last state. A trial is one task with one seed; wall "
    "time is summed over trials, which overlap when run concurrently, and charges an answer "
    "that the run computed once and reused the time it took, to each strategy that used it, as "
    "its tokens are charged; the line under the table says how long the run really took."
)


@dataclass(frozen=True)
class Table:
    title: str
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    text: str = ""  # how to read it


@dataclass(frozen=True)
class Page:
    title: str
    facts: Sequence[tuple[str, str]]  # the config, as label and value
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    images: Sequence[tuple[str, Path]]  # caption, PNG file
    notes: Sequence[str] = ()  # extra sentences under the plots
    tables: Sequence[Table] = ()  # more tables under the results (paired comparisons, ...)
    headline: str = ""  # what the comparison found, in one line, under the title
    under: Sequence[str] = ()  # lines under the results table (the wall time really spent)


def render_markdown(page: Page) -> str:
    """The page as Markdown; images are linked by file name (they sit beside report.md).

    >>> "| self-refine |" in render_markdown(Page("T", [], ("strategy",), [("self-refine",)], []))
    True
    """
    lines = [f"# {_md(page.title)}", ""]
    lines += [f"**{_md(page.headline)}**", ""] if page.headline else []
    lines += ["## Config", ""]
    lines += [f"- **{_md(k)}**: {_md(v)}" for k, v in page.facts]
    lines += ["", "## Results", ""]
    lines += _md_table(page.header, page.rows)
    lines += [line for u in page.under for line in ("", _md(u))]
    for table in page.tables:
        lines += ["", f"## {_md(table.title)}", ""]
        lines += _md_table(table.header, table.rows)
        lines += ["", _md(table.text)] if table.text else []
    lines += ["", "## Plots", ""]
    lines += [f"![{_md(caption)}]({path.name})\n" for caption, path in page.images]
    lines += [_md(n) + "\n" for n in page.notes]
    lines += ["## How to read this", "", HOW_TO_READ, ""]
    return "\n".join(lines)


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(_md(h) for h in header) + " |"]
    lines.append("|" + "|".join(":---" if i == 0 else "---:" for i in range(len(header))) + "|")
    return lines + ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]


def render_html(page: Page) -> str:
    """The page as one HTML file with its PNGs inlined, so it can be mailed or archived alone.

    >>> "&lt;b&gt;" in render_html(Page("<b>", [], (), [], []))
    True
    """
    e = html.escape
    facts = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in page.facts)
    tables = "".join(
        f"<h2>{e(t.title)}</h2>{_html_table(t.header, t.rows)}"
        + (f"<p>{e(t.text)}</p>" * bool(t.text))
        for t in page.tables
    )
    figures = "".join(
        f'<figure><img alt="{e(caption)}" src="data:image/png;base64,{_base64(path)}">'
        f"<figcaption>{e(caption)}</figcaption></figure>"
        for caption, path in page.images
    )
    notes = "".join(f"<p>{e(n)}</p>" for n in page.notes)
    headline = f"<p class=headline><strong>{e(page.headline)}</strong></p>" * bool(page.headline)
    under = "".join(f"<p>{e(u)}</p>" for u in page.under)
    how = e(HOW_TO_READ).replace("**", "")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(page.title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{e(page.title)}</h1>{headline}<h2>Config</h2><table class=facts>{facts}</table>"
        f"<h2>Results</h2>{_html_table(page.header, page.rows)}{under}{tables}"
        f"<h2>Plots</h2>{figures}{notes}"
        f"<h2>How to read this</h2><p>{how}</p></body></html>\n"
    )


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table class=results><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;"
    "color:#222}table{border-collapse:collapse;margin:1rem 0}th,td{padding:.3rem .7rem;"
    "border-bottom:1px solid #ddd}.results td:not(:first-child),.results th:not(:first-child)"
    "{text-align:right}.facts th{text-align:left;color:#555;font-weight:normal}"
    "img{max-width:100%}figure{margin:1rem 0}figcaption{color:#555;font-size:.9rem}"
)


def _base64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def _md(text: str) -> str:
    """Markdown-safe text: a `|` would split a table cell, and `<` could open raw HTML."""
    return html.escape(text, quote=False).replace("|", "\\|")
