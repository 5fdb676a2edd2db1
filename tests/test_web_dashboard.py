"""`reflexion serve` as a dashboard, on runs whose outcomes are known in advance (web_runs'
LearningModel: `single` solves the 8 tasks of 16 whose first word is at an even place, a
strategy that reflects solves all 16 in 2 episodes). Through Starlette's test client: the runs
list (best strategy, pass rates, sorting, the folder compare would refuse), the run page
(results first, the paired matrix, success by episode, the task filter, settings folded), the
task page's verdicts and picker, the memory page's filters and counts against `reflexion memory
list`, and two runs side by side against `reflexion diff`. Then the same pages in headless
Chromium, with screenshots."""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import ARTIFACTS, follow, launched, serving, skip_without_chromium
from starlette.testclient import TestClient
from web_runs import learning_run

from reflexion.cli import main
from reflexion.report.runs_diff import diff_rows, diff_runs
from reflexion.web.app import make_app
from reflexion.web.site import Site

FAILING_FIRST = [f"w{i}" for i in range(16) if i % 2]  # single fails these; reflexion does not
STORES = r"<h2>(\d+) lessons (?:.*? \(of \d+\) )?in (.*?)</h2>"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/dash (4 strategies, 2 episodes), runs/base (2 strategies, 1 episode: reflexion
    has no second try) and runs/future (base, as if a newer version had written it)."""
    root = tmp_path_factory.mktemp("dashboard")
    strategies = ("single", "reflexion", "reflexion-window", "insights")
    learning_run(root / "dash", strategies, episodes=2)
    learning_run(root / "base", ("single", "reflexion"), episodes=1)
    future = Path(shutil.copytree(root / "base", root / "future"))
    config = json.loads((future / "config.json").read_text())
    config |= {"version": "9.0", "created": config["created"] + 60}
    (future / "config.json").write_text(json.dumps(config))
    return root


@pytest.fixture(scope="module")
def web(runs: Path) -> TestClient:
    return TestClient(make_app(Site.from_paths([runs])), base_url="http://127.0.0.1")


def column(page: str, cls: str, index: int = 0) -> list[str]:
    """The text of one column of the table of class `cls`."""
    body = page.split(f'<table class="{cls}">')[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>")[1])
    cells = [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row) for row in rows]
    return [html.unescape(re.sub(r"<[^>]+>", "", c[index])) for c in cells]


def test_the_runs_list_shows_each_runs_best_strategy_and_sorts(web: TestClient) -> None:
    page = web.get("/").text
    assert column(page, "runs") == ["future", "base", "dash"]  # newest first
    best = dict(zip(column(page, "runs"), column(page, "runs", 1), strict=True))
    tie = "50.0% tie: all 2 strategies"  # single and reflexion (1 episode) solve the same
    assert best == {"dash": "100.0% tie: reflexion, reflexion-window", "base": tie, "future": tie}
    rates = column(page, "runs", 4)[2]
    assert rates == "single 50.0% · reflexion 100.0% · reflexion-window 100.0% · insights 50.0%"
    assert column(web.get("/?sort=best&desc=1").text, "runs")[0] == "dash"
    assert column(web.get("/?sort=best&desc=0").text, "runs")[-1] == "dash"
    assert column(web.get("/?sort=run&desc=0").text, "runs") == ["base", "dash", "future"]
    by_tokens = column(web.get("/?sort=tokens&desc=1").text, "runs", 5)
    assert [int(t.replace(",", "")) for t in by_tokens] == sorted(
        (int(t.replace(",", "")) for t in by_tokens), reverse=True
    )
    assert web.get("/?sort=<b>").status_code == 404


def test_the_runs_list_warns_of_a_folder_compare_would_refuse(web: TestClient) -> None:
    page = web.get("/").text
    warnings = dict(zip(column(page, "runs"), column(page, "runs", 9), strict=True))
    assert "compare would refuse it" in warnings["future"]
    assert "written by reflexion 9.0, newer than this one" in warnings["future"]
    assert warnings["dash"] == warnings["base"] == ""


def test_a_run_page_puts_the_results_first_and_the_settings_last(web: TestClient) -> None:
    page = web.get("/runs/dash").text
    order = ["<h2>Results", "Paired differences", "Success by position", "Success by episode"]
    order += ['<h2 id="tasks">Tasks', '<details id="settings">']
    places = [page.index(marker) for marker in order]
    assert places == sorted(places)
    assert column(page, "results") == ["single", "reflexion", "reflexion-window", "insights"]
    assert column(page, "results", 2)[:2] == ["50.0% [25.0-75.0]", "100.0% [100.0-100.0]"]
    assert column(page, "episodes", 2) == ["50.0% [25-75]", "100.0% [100-100]"]  # reflexion


def test_the_matrix_shows_each_pairs_difference_coloured_by_p(web: TestClient) -> None:
    page = web.get("/runs/dash").text

    def cell(row: str, col: str) -> tuple[str, str]:
        found = re.search(
            rf'<td class="([^"]+)" title="[^"]*" data-row="{row}" data-col="{col}" '
            r'data-p="[^"]+">([^<]+)<small>',
            page,
        )
        assert found, (row, col)
        return found[1], found[2]

    # reflexion won the 8 tasks single failed, lost none: McNemar p = 2 / 2^8
    assert cell("reflexion", "single") == ("p01 up", "+50.0")
    assert cell("single", "reflexion") == ("p01 down", "-50.0")
    assert cell("reflexion-window", "reflexion") == ("p100 even", "+0.0")
    assert 'data-p="0.0078"' in page
    assert 'title="reflexion vs single: tasks 16, B - A [95% CI] +50.0 pts' in page


def test_the_tasks_filter_by_verdict_and_strategy(web: TestClient) -> None:
    every = web.get("/runs/dash").text
    assert len(column(every, "tasks")) == 16 and "16 of 16 tasks (seed 0)" in every
    failed = web.get("/runs/dash", params={"verdict": "failed", "strategy": "single"}).text
    assert column(failed, "tasks") == FAILING_FIRST and "8 of 16 tasks" in failed
    assert set(column(failed, "tasks", 2)) == {"passed (2 attempts)"}  # reflexion, on them
    split = web.get("/runs/dash", params={"verdict": "split"}).text
    assert column(split, "tasks") == FAILING_FIRST
    assert column(web.get("/runs/dash?verdict=failed&strategy=reflexion").text, "tasks") == []
    bad = web.get("/runs/dash", params={"strategy": "nope"})
    assert bad.status_code == 404 and "strategy must be one of single, reflexion" in bad.text


def test_a_task_page_opens_with_a_verdict_per_strategy_and_a_picker(web: TestClient) -> None:
    page = web.get("/runs/dash/tasks/w1").text
    verdicts = re.findall(
        r'<li data-strategy="([^"]+)"><strong>[^<]+</strong>: <span[^>]*>(\w+)', page
    )
    assert verdicts == [
        ("single", "failed"),
        ("reflexion", "passed"),
        ("reflexion-window", "passed"),
        ("insights", "failed"),
    ]
    assert "passed</span> held-out after 2 attempts (it returned episode 2&#x27;s answer" in page
    assert "22 tokens in 1 call<" in page  # single: one call
    assert re.findall(r"<h2>([^<]+)</h2>", page) == [v for v, _ in verdicts]  # all 4 shown
    two = web.get("/runs/dash/tasks/w1", params=[("show", "single"), ("show", "reflexion")])
    assert re.findall(r"<h2>([^<]+)</h2>", two.text) == ["single", "reflexion"]
    assert 'value="insights"> insights' in two.text  # unticked, still offered
    bad = web.get("/runs/dash/tasks/w1", params={"show": "nope"})
    assert bad.status_code == 404 and "has no strategy &#x27;nope&#x27;" in bad.text


def memory_list(runs: Path, capsys: pytest.CaptureFixture[str], *options: str) -> dict[str, int]:
    """`reflexion memory list`'s count per store (those it lists any lesson of)."""
    assert main(["memory", "list", str(runs / "dash"), *options]) == 0
    counts = re.findall(
        r"^(\d+) reflections in (.*?)(?: \(the first.*)?$", capsys.readouterr().out, re.M
    )
    return {label: int(n) for n, label in counts if int(n)}


def page_counts(page: str) -> dict[str, int]:
    return {html.unescape(label): int(n) for n, label in re.findall(STORES, page)}


@pytest.mark.parametrize(
    ("query", "options"),
    [
        ({}, ()),
        ({"kind": "reflection"}, ("--kind", "reflection")),
        ({"kind": "rule"}, ("--kind", "rule")),
        ({"strategy": "reflexion-window"}, ("--strategy", "reflexion-window")),
        ({"task": "words/w1"}, ("--task", "words/w1")),
        ({"task": "w3", "strategy": "reflexion"}, ("--task", "w3", "--strategy", "reflexion")),
    ],
)
def test_the_memory_counts_agree_with_memory_list(
    web: TestClient,
    runs: Path,
    capsys: pytest.CaptureFixture[str],
    query: dict[str, str],
    options: tuple[str, ...],
) -> None:
    page = web.get("/runs/dash/memory", params=query).text
    listed = memory_list(runs, capsys, *options)
    assert page_counts(page) == listed and listed
    total = re.search(r'<p class="counts">(\d+) (?:of \d+ )?lessons in 2 stores', page)
    assert total and int(total[1]) == sum(listed.values())


def test_the_memory_kinds_add_up_to_the_lessons_shown(web: TestClient) -> None:
    """Defect 8: the kind counts (over both stores) disagreed with a heading (one store's)."""
    page = web.get("/runs/dash/memory").text
    kinds = [int(n) for n in re.findall(r">(?:reflection|rule|exemplar) \((\d+)\)<", page)]
    total = re.search(r'<p class="counts">(\d+) lessons in 2 stores: (\d+) in .*?; (\d+) in', page)
    # reflections, rules, and the exemplars insights keeps of its successes
    assert total and len(kinds) == 3
    assert sum(kinds) == int(total[1]) == int(total[2]) + int(total[3])
    assert sum(page_counts(page).values()) == int(total[1])
    assert "Kinds (in all 2 stores)" in page


def test_the_memory_filters_name_what_is_unknown(web: TestClient) -> None:
    bad = web.get("/runs/dash/memory", params={"task": "w99"})
    assert bad.status_code == 404 and "no task &#x27;w99&#x27;" in bad.text
    bad = web.get("/runs/dash/memory", params={"strategy": "reflection"})
    assert bad.status_code == 404 and "closest: reflexion" in bad.text


def test_two_runs_side_by_side_show_what_diff_prints(
    web: TestClient, runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = web.get("/diff", params={"a": "base", "b": "dash"}).text
    d = diff_runs(runs / "base", runs / "dash")
    for row in diff_rows(d.strategies):
        assert "".join(f"<td>{html.escape(c)}</td>" for c in row) in page
    reflexion = column(page, "diff")[1], column(page, "diff", 4)[1]
    assert reflexion == ("reflexion", "+50.0 pts [+25.0, +75.0]")
    assert "settings that differ: episodes" in page
    assert "in one run only (not compared): reflexion-window, insights".lower() in page.lower()
    assert main(["diff", str(runs / "base"), str(runs / "dash")]) == 0
    assert "+50.0 pts [+25.0, +75.0]" in capsys.readouterr().out
    assert web.get("/diff", params={"a": "base", "b": "nope"}).status_code == 404


def test_two_runs_of_other_tasks_are_refused_in_one_line(web: TestClient, runs: Path) -> None:
    other = runs.parent / "other-tasks"
    learning_run(other / "few", ("single",), episodes=1, tasks=4)
    app = make_app(Site.from_paths([runs, other]))
    answer = TestClient(app, base_url="http://127.0.0.1").get("/diff?a=base&b=few")
    assert answer.status_code == 400 and "cannot be diffed" in answer.text
    assert "different tasks" in answer.text


# In headless Chromium (skipped, saying why, where there is none)


@pytest.fixture(scope="module")
def server(runs: Path) -> Iterator[str]:
    with serving(runs) as address:
        yield address


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = skip_without_chromium()
    with launched(sync_api) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def screenshot(page: Any, shots: Path, name: str) -> Path:
    """A full-page screenshot in the test's folder, and a copy in test-artifacts/."""
    path = shots / name
    page.screenshot(path=str(path), full_page=True)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(path, ARTIFACTS / name)
    return path


def names_in(page: Any) -> list[str]:
    return [str(n) for n in page.locator("table.runs tbody tr td:first-child").all_inner_texts()]


def test_a_user_sorts_the_runs_and_opens_the_best(server: str, browser: Any, shots: Path) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server)
    assert names_in(page) == ["future", "base", "dash"]
    assert page.get_by_text("compare would refuse it").is_visible()
    follow(page, "best final")
    assert names_in(page) == ["dash", "base", "future"]  # the best pass rate first
    follow(page, "best final ▼")
    assert names_in(page)[-1] == "dash"
    path = screenshot(page, shots, "dashboard-runs.png")
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and path.stat().st_size > 10_000
    follow(page, "dash", exact=True)
    matrix = page.locator('td[data-row="reflexion"][data-col="single"]')
    assert matrix.inner_text().startswith("+50.0")
    colour = matrix.evaluate("cell => getComputedStyle(cell).backgroundColor")
    assert colour == "rgb(26, 127, 55)"  # the deepest green: p < 0.01
    assert not page.locator("#settings table").is_visible()  # folded away
    screenshot(page, shots, "dashboard-run.png")
    page.close()


def test_a_user_filters_the_tasks_then_picks_two_strategies(
    server: str, browser: Any, shots: Path
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{server}/runs/dash")
    assert page.locator("table.tasks tbody tr").count() == 16
    page.locator("form.filter select[name=verdict]").select_option("failed")
    page.locator("form.filter select[name=strategy]").select_option("single")
    follow(page, "Filter", role="button")
    rows = page.locator("table.tasks tbody tr td:first-child").all_inner_texts()
    assert rows == FAILING_FIRST and page.get_by_text("8 of 16 tasks").is_visible()
    follow(page, "w1", exact=True)
    assert page.locator("ul.verdicts li").count() == 4
    for name in ("reflexion-window", "insights"):
        page.get_by_role("checkbox", name=name).uncheck()
    follow(page, "Show", role="button")
    assert page.locator(".side h2").all_inner_texts() == ["single", "reflexion"]
    screenshot(page, shots, "dashboard-task.png")
    page.close()


def test_a_user_filters_the_memory_as_memory_list_does(
    server: str, browser: Any, runs: Path, shots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{server}/runs/dash/memory")
    page.locator("form.filter select[name=strategy]").select_option("reflexion")
    follow(page, "Search", role="button")
    listed = memory_list(runs, capsys, "--strategy", "reflexion")
    assert page_counts(page.content()) == listed
    assert page.locator("table.lessons tbody tr").count() == sum(listed.values())
    screenshot(page, shots, "dashboard-memory.png")
    page.close()


def test_a_user_sets_two_runs_side_by_side(server: str, browser: Any, shots: Path) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server)
    page.get_by_label("run A").select_option("base")
    page.get_by_label("run B").select_option("dash")
    follow(page, "Diff", role="button")
    assert page.get_by_role("heading", name="dash against base").is_visible()
    row = page.locator("table.diff tbody tr").nth(1).locator("td").all_inner_texts()
    assert row[:5] == ["reflexion", "16", "50.0%", "100.0%", "+50.0 pts [+25.0, +75.0]"]
    screenshot(page, shots, "dashboard-diff.png")
    page.close()
