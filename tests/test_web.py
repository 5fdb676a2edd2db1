"""`reflexion serve`'s pages through Starlette's test client: what a user reads on each page,
hostile text shown as text, 404 pages, and forgetting only with --allow-edit and a confirmation."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import KeywordEnv, scripted
from memory_run import listed, of_strategy
from running import RunConfig, run, skills_stream
from starlette.testclient import TestClient
from web_runs import HOSTILE, hostile_run

from reflexion.cli import main
from reflexion.web.app import make_app
from reflexion.web.site import Site


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_run(tmp_path_factory.mktemp("web") / "hostile")


def client(run_dir: Path, allow_edit: bool = False) -> TestClient:
    app = make_app(Site.from_paths([run_dir], allow_edit, token="t0k"))
    return TestClient(app, base_url="http://127.0.0.1")


def lesson_ids(page: str) -> list[str]:
    return re.findall(r'href="/runs/hostile/memory/([0-9a-f]{16})"', page)


def test_the_runs_and_a_run_page_show_the_comparison(run_dir: Path) -> None:
    web = client(run_dir)
    index = web.get("/").text
    assert 'href="/runs/hostile"' in index and "keywords" in index
    page = web.get("/runs/hostile").text
    for shown in ("Results", "Paired differences, on the same tasks", "k0", "k1"):
        assert shown in page
    assert 'title="reflexion vs single: tasks 2, B - A [95% CI] +0.0 pts' in page
    assert 'href="/runs/hostile/tasks/k0"' in page and "/runs/hostile/memory" in page


def test_a_task_page_puts_the_strategies_side_by_side_with_diffs(run_dir: Path) -> None:
    page = client(run_dir).get("/runs/hostile/tasks/k0").text
    assert page.count("<h2>") == 3  # single, self-refine, reflexion
    assert "candidate, changed lines" in page  # the second attempt, as a diff
    assert re.search(r'<span class="add">\+.*try \d+', page)
    assert "<strong>reflect</strong>" in page and "<strong>feedback</strong>" in page
    assert "held-out: failed" in page and "stored as lesson" in page


def test_hostile_text_is_shown_as_text_everywhere(run_dir: Path) -> None:
    web = client(run_dir)
    memory = web.get("/runs/hostile/memory").text
    pages = [web.get("/runs/hostile/tasks/k0").text, memory]
    pages.append(web.get(f"/runs/hostile/memory/{lesson_ids(memory)[0]}").text)
    pages.append(web.get("/runs/hostile/memory", params={"q": HOSTILE}).text)
    pages.append(web.get("/runs/hostile/search", params={"q": HOSTILE}).text)
    for page in pages:
        assert "<script>window" not in page and "<img src=x" not in page
        assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in page


def test_memory_lists_lessons_with_credit_and_searches_by_similarity(run_dir: Path) -> None:
    web = client(run_dir)
    page = web.get("/runs/hostile/memory").text
    ids = lesson_ids(page)
    assert len(set(ids)) == 2 and "lessons in" in page  # one lesson per task (2 episodes)
    assert "recalled 1: " in page or "never recalled" in page
    waiting = web.get("/runs/hostile/memory", params={"q": "apple cloud try"}).text
    assert 'data-src="/runs/hostile/search?q=apple%20cloud%20try"' in waiting  # fetched after
    found = web.get("/runs/hostile/search", params={"q": "apple cloud try"}).text
    assert "Most similar to" in found and "similarity" in found


def test_a_lesson_page_says_who_recalled_it(run_dir: Path) -> None:
    web = client(run_dir)
    rid = lesson_ids(web.get("/runs/hostile/memory").text)[0]
    page = web.get(f"/runs/hostile/memory/{rid}").text
    assert "Recalled 1 times in this run" in page and "reflexion seed 0" in page
    assert "Forget this lesson" not in page  # read-only


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/runs/nope", "no run named &#x27;nope&#x27;"),
        ("/runs/hostile/tasks/k9", "no task &#x27;k9&#x27;"),
        ("/runs/hostile/tasks/k0?seed=7", "has no seed 7"),
        ("/runs/hostile/memory/0123456789abcdef", "no lesson &#x27;0123456789abcdef&#x27;"),
        ("/runs/hostile/plots/..%2Fconfig.json", "nothing at /runs/hostile/plots/../config.json"),
        ("/runs/hostile/plots/report.md", "no plot &#x27;report.md&#x27;"),
        ("/runs/hostile/tasks/k0?seed=--5", "seed must be a whole number"),
        ("/runs/hostile/tasks/k0?seed=%C2%B2", "seed must be a whole number"),
        ("/runs/hostile/tasks/k0?seed=" + "9" * 5000, "seed must be a whole number"),
        ("/no/such/page", "nothing at /no/such/page"),
    ],
)
def test_unknown_things_are_a_404_page_that_says_what(run_dir: Path, path: str, says: str) -> None:
    answer = client(run_dir).get(path)
    assert answer.status_code == 404 and says in answer.text and "Not found" in answer.text


def test_forgetting_needs_allow_edit_a_confirmation_and_the_token(
    run_dir: Path, tmp_path: Path
) -> None:
    run_dir = Path(shutil.copytree(run_dir, tmp_path / "hostile"))  # the others' run stays whole
    read_only = client(run_dir)
    rid = lesson_ids(read_only.get("/runs/hostile/memory").text)[0]
    forget = f"/runs/hostile/memory/{rid}/forget"
    assert read_only.post(forget, data={"token": "t0k"}).status_code == 403
    web = client(run_dir, allow_edit=True)
    assert "Forget this lesson" in web.get(f"/runs/hostile/memory/{rid}").text
    assert 'id="confirm"' in web.get(forget).text  # it asks first
    assert web.post(forget, data={"token": "stale", "why": "x"}).status_code == 403
    assert rid in lesson_ids(web.get("/runs/hostile/memory").text)  # nothing changed yet
    done = web.post(forget, data={"token": "t0k", "why": "misleading"})
    assert done.status_code == 200 and f"Forgot lesson {rid}" in done.text
    assert rid not in lesson_ids(done.text.split("lessons in")[1])
    history = web.get(f"/runs/hostile/memory/{rid}").text
    assert "Not stored now" in history and "forget" in history and "misleading" in history


def test_a_page_asked_for_by_another_host_name_is_refused(run_dir: Path) -> None:
    """DNS rebinding: another site's page that points its name at 127.0.0.1 gets no form."""
    web = client(run_dir, allow_edit=True)
    rid = lesson_ids(web.get("/runs/hostile/memory").text)[0]
    rebound = web.get(f"/runs/hostile/memory/{rid}/forget", headers={"host": "evil.example"})
    assert rebound.status_code == 400 and "t0k" not in rebound.text


def test_a_body_that_is_not_utf8_is_refused_not_a_crash(run_dir: Path, tmp_path: Path) -> None:
    web = client(Path(shutil.copytree(run_dir, tmp_path / "hostile")), allow_edit=True)
    rid = lesson_ids(web.get("/runs/hostile/memory").text)[0]
    sent = web.post(f"/runs/hostile/memory/{rid}/forget", content=b"token=\xff\xfe")
    assert sent.status_code == 403 and rid in web.get("/runs/hostile/memory").text


def test_a_run_with_a_broken_config_is_one_row_not_a_broken_page(
    run_dir: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    app = make_app(Site.from_paths([run_dir, broken]))
    index = TestClient(app, base_url="http://127.0.0.1").get("/")
    assert index.status_code == 200 and "unreadable" in index.text and "hostile" in index.text


def test_serve_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", str(tmp_path / "missing")]) == 2
    assert main(["serve", str(tmp_path)]) == 2  # a folder with no run in it
    (tmp_path / "config.json").write_text("{}")
    assert main(["serve", str(tmp_path), "--allow-edit", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "is not a folder" in err[0] and "holds none" in err[1]
    assert "--allow-edit serves this machine only" in err[2]


INSIGHTS = [
    "apple",
    "apple river",
    "ADD: Use every listed word.",
    "cloud",
    "cloud stone",
    "UPVOTE 1",
]


@pytest.fixture(scope="module")
def kinds_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run folder with a rule (insights, upvoted to 3 votes) and four exemplars (insights'
    successes, kept to wait for a chunk of 8, and an arm added to the folder afterwards),
    streamed over the keyword tasks by a scripted model."""
    out = tmp_path_factory.mktemp("web") / "kinds"
    arms = [(("insights",), INSIGHTS), (("insights", "exemplars"), ["apple river", "cloud stone"])]
    for strategies, replies in arms:
        config = RunConfig(
            env="keywords",
            strategies=strategies,
            out=str(out),
            episodes=2,
            embedder="hash-64",
            order="stream",
            concurrency=1,
            curation="text",
        )
        run(config, model=scripted(replies), env=KeywordEnv())
    return out


def kinds_of(page: str) -> dict[str, str]:
    """Each listed lesson's id -> the kind cell beside it."""
    lesson = r'href="/runs/kinds/memory/([0-9a-f]{16})">[0-9a-f]{16}</a></td>'
    return dict(re.findall(lesson + "<td>([^<]*)", page))


def test_the_memory_page_shows_each_lessons_kind_and_a_rules_votes(kinds_dir: Path) -> None:
    page = client(kinds_dir).get("/runs/kinds/memory").text
    assert sorted(kinds_of(page).values()) == ["exemplar"] * 4 + ["rule (3 votes)"]
    assert "<strong>all</strong>" in page
    assert '<a href="/runs/kinds/memory?kind=rule">rule (1)</a>' in page
    assert '<a href="/runs/kinds/memory?kind=exemplar">exemplar (4)</a>' in page
    assert "kind=item" not in page  # no link to a kind the run never wrote


def test_the_memory_page_filters_by_kind(kinds_dir: Path) -> None:
    web = client(kinds_dir)
    every = kinds_of(web.get("/runs/kinds/memory").text)
    rules = web.get("/runs/kinds/memory", params={"kind": "rule"}).text
    assert list(kinds_of(rules).values()) == ["rule (3 votes)"]
    assert "1 lessons of kind rule (of 5) in" in rules and "<strong>rule (1)</strong>" in rules
    exemplars = kinds_of(web.get("/runs/kinds/memory", params={"kind": "exemplar"}).text)
    assert set(exemplars) == {i for i, k in every.items() if k == "exemplar"}
    assert kinds_of(web.get("/runs/kinds/memory", params={"kind": "item"}).text) == {}
    found = web.get("/runs/kinds/memory", params={"kind": "rule", "q": "apple river"}).text
    assert '<option value="rule" selected="selected">rule</option>' in found  # the form keeps it
    hits = web.get("/runs/kinds/search", params={"kind": "rule", "q": "apple river"}).text
    hits = hits.split("Most similar to")[1]
    assert "rule (3 votes)" in hits and "exemplar" not in hits  # the search keeps the kind
    bad = web.get("/runs/kinds/memory", params={"kind": "<b>rules"})
    assert bad.status_code == 404 and "kind must be one of reflection, exemplar, rule" in bad.text
    assert "<b>rules" not in bad.text


def test_the_run_page_shows_what_memory_cost_and_the_kinds_written(kinds_dir: Path) -> None:
    page = client(kinds_dir).get("/runs/kinds").text
    assert "Memory and prefix cache, as shares of each role&#x27;s prompt tokens" in page
    assert re.search(
        r"<td>insights</td><td>generate</td><td>\d+</td><td>\d+</td><td>\d+\.\d%", page
    )
    assert "<td>insights</td><td>exemplar: 2 kept; rule: 1 added, 1 upvoted</td>" in page
    assert "<td>exemplars</td><td>exemplar: 2 kept</td>" in page
    for kind in ("exemplar", "rule"):
        assert f'<a href="/runs/kinds/memory?kind={kind}">{kind}</a>' in page


def test_a_task_page_says_why_a_program_was_not_kept_as_a_skill(tmp_path: Path) -> None:
    """The check of a program before it is kept (a `verify` step) and the note that it was not
    kept read as what they say, not as a model call of 0 tokens."""
    silent = "```python\nfor x in []:\n    print(x)\n```"
    skills_stream(tmp_path, "1,seed=7", [silent, "Answer: 3*6+3+3"], code_rounds=1)
    page = client(tmp_path / "r").get("/runs/r/tasks/game24/3-3-3-6").text
    assert "verify: " in page and "printed no expression" in page
    assert "skipped: " in page and "does not pass the check on its own" in page
    assert "0 tokens out" not in page


def test_a_task_page_shows_a_curators_board_edits_as_what_they_did(kinds_dir: Path) -> None:
    web = client(kinds_dir)
    pages = [web.get(f"/runs/kinds/tasks/{t.id}").text for t in KeywordEnv().tasks()]
    edits = [p for p in pages if "revise: " in p]
    assert edits and all("upvote " in p or "add " in p for p in edits)
    assert not [p for p in pages if "0 tokens out" in p]


def test_6_the_web_memory_page_lists_what_memory_list_lists(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reflexion.web.app import make_app  # here: a broken web layer fails only its own tests
    from reflexion.web.site import Site

    lines = listed(q, capsys)
    web = TestClient(
        make_app(Site.from_paths([q], False, token="t0k")), base_url="http://127.0.0.1"
    )
    page = web.get("/runs/q/memory")
    assert page.status_code == 200
    shown = set(re.findall(r'href="/runs/q/memory/([0-9a-f]{16})"', page.text))
    assert shown == set(lines), (len(shown), len(lines))
    rid = of_strategy(lines, "reflexion-window")[0]
    assert web.get(f"/runs/q/memory/{rid}").status_code == 200
