"""The HTML of every page. Text from a run (task ids, candidates, reflections, feedback) is
escaped here, always; only `Html`, markup these functions made, passes through as it is.

    >>> str(table(["a"], [["<b>"]]))
    '<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>&lt;b&gt;</td></tr></tbody></table>'
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from urllib.parse import quote

VOID = {"img", "input", "br", "hr", "meta"}  # elements with no content and no closing tag


class Html(str):
    """Markup that is already safe (made by this module from escaped parts)."""

    __slots__ = ()


def esc(value: object) -> Html:
    """`value` as HTML text: escaped unless it is already `Html`."""
    return value if isinstance(value, Html) else Html(html.escape(str(value)))


def join(parts: Iterable[object], sep: str = "") -> Html:
    return Html(sep.join(esc(p) for p in parts))


def tag(element: str, /, *content: object, cls: str = "", **attrs: str) -> Html:
    """<element class=... attr="...">content</element>, attribute values and text escaped."""
    names = {"cls": "class", "for_": "for"}
    pairs = ([("class", cls)] if cls else []) + [(names.get(k, k), v) for k, v in attrs.items()]
    opened = "".join(f' {k.replace("_", "-")}="{html.escape(v)}"' for k, v in pairs)
    if element in VOID:
        return Html(f"<{element}{opened}>")
    return Html(f"<{element}{opened}>{join(content)}</{element}>")


def url(*parts: str, **query: str) -> str:
    """A path from parts, each quoted (a task id like HumanEval/3 stays one part)."""
    path = "/" + "/".join(quote(p, safe="") for p in parts)
    if query:
        path += "?" + "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in query.items())
    return path


def link(href: str, *text: object) -> Html:
    return tag("a", *text, href=href)


def table(header: Sequence[object], rows: Iterable[Sequence[object]], cls: str = "") -> Html:
    head = tag("thead", tag("tr", *(tag("th", h) for h in header)))
    body = tag("tbody", *(tag("tr", *(tag("td", c) for c in row)) for row in rows))
    return tag("table", head, body, cls=cls)


def pre(text: str, cls: str = "") -> Html:
    return tag("pre", text, cls=cls)


def page(title: str, *body: object, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    """A whole page: the trail of links to where it sits, the title and the body."""
    trail = join([link("/", "runs"), *(link(href, text) for href, text in crumbs)], " / ")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)} · reflexion</title>{ICON_LINK}<style>{STYLE}</style></head><body>"
        f"<nav>{trail}</nav><h1>{esc(title)}</h1>{join(body)}</body></html>\n"
    )


# a loop of an arrow (generate, score, reflect), in the pass colour: the tab's icon
ICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="5.5" '
    b'fill="none" stroke="#1a7f37" stroke-width="2.5"/><path d="M11 1l4 4-5 1z" fill="#1a7f37"/>'
    b"</svg>"
)
ICON_LINK = '<link rel="icon" href="/favicon.ico" type="image/svg+xml">'

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:90rem;margin:1.5rem auto;padding:0 1rem;"
    "color:#222}nav{color:#666;margin-bottom:.5rem}table{border-collapse:collapse;margin:1rem 0}"
    "th,td{padding:.25rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
    "pre{background:#f6f6f6;padding:.5rem;overflow-x:auto;white-space:pre-wrap;margin:.3rem 0}"
    ".side{display:grid;grid-auto-flow:column;grid-auto-columns:minmax(22rem,1fr);gap:1rem;"
    "overflow-x:auto}.attempt{border:1px solid #ddd;border-radius:4px;padding:.5rem;"
    "margin-bottom:.8rem}.add{background:#e6ffec}.del{background:#ffebe9}.note{color:#666}"
    ".pass{color:#1a7f37}.fail{color:#cf222e}img{max-width:100%}.lesson{max-width:50rem}"
    "form{display:inline}button{margin:.5rem 0}form.filter,form.picker,form.pick{display:block;"
    "margin:.5rem 0}.warn{color:#9a6700}details{margin:1.5rem 0}summary{cursor:pointer;"
    "font-weight:600}.results td:not(:first-child){text-align:right}"
    ".matrix td{text-align:center;min-width:4.5rem}.matrix small{display:block;color:#555}"
    ".matrix td.self{background:#eee}.swatch{padding:.1rem .4rem;border-radius:3px}"
    ".up.p01{background:#1a7f37;color:#fff}.up.p05{background:#4ac26b}.up.p10{background:#aceebb}"
    ".down.p01{background:#cf222e;color:#fff}.down.p05{background:#fa4549}"
    ".down.p10{background:#ffcecb}.p100{background:#f6f8fa;color:#555}"
    ".up.p01 small,.down.p01 small{color:#fff}th a{color:inherit}"
)
