"""The dashboard's pages as a user meets them in headless Chromium, served by `reflexion serve`:
the memory page counts its lessons once, a search says it is searching (counting the seconds)
while the page around it is already there, the browser finds an icon, a lesson's history says
what it was before a revert brought it back, and a run page's first load does not wait for a
heavy import. Runs of web_runs' LearningModel with a Chroma store (hash embedder)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import follow, launched, serving, skip_without_chromium
from web_runs import learning_run

from reflexion.cli import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pages")
    learning_run(root / "dash", ("single", "reflexion"), episodes=2)
    return root


@pytest.fixture(scope="module")
def server(runs: Path) -> Iterator[str]:
    with serving(runs) as address:
        yield address


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = skip_without_chromium()
    with launched(sync_api) as chromium:
        yield chromium


def test_the_memory_page_counts_its_lessons_once(server: str, browser: Any) -> None:
    page = browser.new_page()
    page.goto(f"{server}/runs/dash/memory")
    said = page.get_by_text(re.compile(r"^\d+ lessons in ")).all_inner_texts()
    assert len(said) == 1, said
    assert page.locator("table.lessons tbody tr").count() == int(said[0].split()[0])
    page.close()


def test_a_search_says_it_is_searching_while_the_page_is_already_shown(
    server: str, browser: Any
) -> None:
    page = browser.new_page()
    held: list[Any] = []
    page.route("**/runs/dash/search?*", lambda route: held.append(route))  # held until let go
    page.goto(f"{server}/runs/dash/memory")
    page.get_by_placeholder("search lessons").fill("apple river")
    follow(page, "Search", role="button")
    assert page.locator("table.lessons tbody tr").count() > 0  # the lessons, at once
    status = page.get_by_role("status")
    assert status.inner_text().startswith("searching… (the first search loads the embedding")
    page.wait_for_function("document.querySelector('.searching').textContent.endsWith(' 1 s')")
    assert len(held) == 1
    held[0].continue_()
    page.get_by_role("heading", name="Most similar to “apple river”").wait_for()
    assert page.locator("table.hits tbody tr").count() > 0 and status.count() == 0
    page.close()


def test_the_browser_finds_an_icon(server: str, browser: Any) -> None:
    page = browser.new_page()
    failed: list[str] = []
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    page.goto(f"{server}/runs/dash")
    icon = page.request.get(f"{server}/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.body().startswith(b"<svg")
    assert page.locator('link[rel="icon"]').get_attribute("href") == "/favicon.ico"
    assert failed == []
    page.close()


def test_a_reverted_lesson_says_what_it_was_before_the_revert(
    server: str, browser: Any, runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "list", str(runs / "dash")]) == 0
    rid = re.findall(r"\b[0-9a-f]{16}\b", capsys.readouterr().out)[0]
    assert main(["memory", "forget", str(runs / "dash"), rid, "--why", "misleading"]) == 0
    assert main(["memory", "revert", str(runs / "dash"), rid]) == 0
    page = browser.new_page()
    page.goto(f"{server}/runs/dash/memory/{rid}")
    rows = page.locator("table.history tbody tr")
    forget, revert = (rows.nth(i).locator("td").all_inner_texts() for i in range(2))
    assert forget[2] == "forget" and forget[4] != "(not stored)"  # the lesson's text
    assert revert[2] == "revert" and revert[4] == "(not stored)"  # it was forgotten
    page.close()


def test_a_run_page_loads_without_importing_scipy(runs: Path) -> None:
    """Its first load took about 3 s, most of it importing scipy for two p-values."""
    code = (
        "import sys, time; from pathlib import Path\n"
        "from reflexion.web.site import Site; from reflexion.web.runs import run_page\n"
        f"site = Site.from_paths([Path({str(runs)!r})]); start = time.perf_counter()\n"
        "html = run_page(site, 'dash')\n"
        "print('scipy' in sys.modules, 'McNemar' in html, time.perf_counter() - start)\n"
    )
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    scipy, shown, _ = done.stdout.split()
    assert (scipy, shown) == ("False", "True"), done.stdout
    assert time.monotonic() - start < 60
