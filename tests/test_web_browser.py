"""`reflexion serve` in a real browser: headless Chromium from the system's `chromium` package,
driven by Playwright (no browser download). Clicks through the runs, a task, the memory, a
search and a forget with its confirmation, and checks what a user sees. Screenshots are kept in
test-artifacts/. Skipped, with the reason, where no Chromium is installed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser import ARTIFACTS, follow, follow_first, launched, serving, skip_without_chromium
from web_runs import HOSTILE, hostile_run

sync_api = skip_without_chromium()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`reflexion serve --allow-edit` on the hostile run, as a user starts it."""
    run_dir = hostile_run(tmp_path_factory.mktemp("browser") / "hostile")
    with serving(run_dir, "--allow-edit") as address:
        yield address


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched(sync_api) as launched_browser:
        yield launched_browser


def test_a_user_clicks_from_the_runs_to_a_task_and_sees_hostile_text_as_text(
    server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server)
    follow(page, "hostile")
    assert page.get_by_role("heading", name="Results").is_visible()
    assert page.locator('td[data-row="reflexion"][data-col="single"]').is_visible()
    follow(page, "k0", exact=True)
    headings = page.locator("h2").all_inner_texts()
    assert headings == ["single", "self-refine", "reflexion"]
    assert HOSTILE.split("<img")[0] in page.locator(".side").inner_text()  # shown, as text
    assert page.evaluate("window.pwned") is None  # and never run
    assert page.locator("span.add").count() > 0  # the second attempt, as a diff
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-task.png"), full_page=True)
    page.close()


def test_a_user_searches_the_memory_then_forgets_a_lesson_after_confirming(
    server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{server}/runs/hostile")
    follow(page, "The memory of this run")
    assert page.get_by_role("heading", name="2 lessons in", exact=False).is_visible()
    page.get_by_placeholder("search lessons").fill("apple cloud try")
    follow(page, "Search", role="button")
    page.get_by_role("heading", name="Most similar to", exact=False).wait_for()  # fetched
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-memory.png"), full_page=True)
    follow_first(page, "table.hits a")
    lesson = page.locator("h1").inner_text().removeprefix("Lesson ")
    assert page.get_by_text("Recalled 1 times in this run").is_visible()
    follow(page, "Forget this lesson…")
    assert page.get_by_role("heading", name=f"Forget {lesson}?").is_visible()
    page.get_by_label("Why (kept in its history):").fill("misleading")
    follow(page, "Yes, forget it", role="button")
    assert page.get_by_text(f"Forgot lesson {lesson}").is_visible()
    assert page.get_by_role("heading", name="1 lessons in", exact=False).is_visible()
    page.goto(f"{server}/runs/hostile/memory/{lesson}")
    assert page.get_by_text("Not stored now").is_visible()
    assert page.get_by_role("cell", name="misleading").is_visible()
    page.close()


def test_an_unknown_run_is_a_404_page_in_the_browser(server: str, browser: Any) -> None:
    page = browser.new_page()
    answer = page.goto(f"{server}/runs/nope")
    assert answer is not None and answer.status == 404
    assert page.get_by_text("no run named 'nope' here").is_visible()
    page.close()
