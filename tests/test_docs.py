"""The README and docs/ hold together: every relative link between pages reaches a file, every
anchor a heading in it, the README stays short and says what the drill takes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to '-',
    and '-1', '-2', ... after a repeated one.

    >>> import tempfile; p = Path(tempfile.mkdtemp()) / "a.md"
    >>> _ = p.write_text("# Recall ranking: `--rank`\\n## A b\\n## A b\\n")
    >>> sorted(anchors(p))
    ['a-b', 'a-b-1', 'recall-ranking---rank']
    """
    seen: dict[str, int] = {}
    found = set()
    for title in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def broken_links(page: Path) -> list[str]:
    """Each relative link of `page` (outside code blocks) whose file or anchor is missing."""
    bad = []
    for target in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not ours to check
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if file.is_dir():
            file = file / "index.md"
        if not file.exists():
            bad.append(f"{page.name}: {target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            bad.append(f"{page.name}: {target}: no heading #{anchor} in {file.name}")
    return bad


def test_every_link_between_pages_resolves() -> None:
    assert [p.name for p in pages()][:2] == ["README.md", "architecture.md"]
    assert [bad for page in pages() for bad in broken_links(page)] == []


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Its part\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/a.md#its-part) [gone](docs/b.md) [bad](docs/a.md#nope) [web](https://x.org/y.md)\n"
        "```\n[in code](docs/c.md)\n```\n"
    )
    found = [bad for page in pages(tmp_path) for bad in broken_links(page)]
    assert found == [
        "README.md: docs/b.md: no such file",
        "README.md: docs/a.md#nope: no heading #nope in a.md",
    ]


def test_every_docs_page_is_listed_in_the_index() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    missing = [p.name for p in pages()[1:] if p.name != "index.md" and f"({p.name})" not in index]
    assert missing == []


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 260, f"README.md has {len(lines)} lines; move reference text to docs/"


def test_the_results_page_and_the_headline_stay_a_reference() -> None:
    results = (ROOT / "docs" / "results.md").read_text(encoding="utf-8").splitlines()
    assert len(results) <= 300, (
        f"docs/results.md has {len(results)} lines; move detail to docs/results/"
    )
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    headline = readme[readme.index("## Headline") :]
    headline = headline[: headline.index("\n## ", 1)]
    assert len(headline) <= 2500, f"the README's headline has {len(headline)} characters"


def test_the_dated_pages_links_resolve() -> None:
    dated = sorted((ROOT / "docs" / "results").glob("*.md"))
    assert len(dated) > 30
    # a link to a kept run folder is to a folder, which is there without an index.md
    bad = [b for p in dated for b in broken_links(p) if not b.endswith("/: no such file")]
    assert bad == []


README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_says_what_the_drill_takes_and_where_the_time_goes() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    drill = text[text.index("`reflexion compare --env quadratic --episodes 5`") :][:400]
    assert "about 10 s" not in drill  # 22 s measured, 11 of them loading the embedder
    assert "loading the embedding model" in drill
