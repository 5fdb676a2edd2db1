"""One curation contract over every memory backend: each `reflexion memory` verb and the web
memory page behave the same on a run whose lessons are in a Chroma store (`reflexion`) and on
one whose lessons are in the window (`reflexion-window`). A backend may decline a verb it cannot
do, but only in one line naming the verb ("the window backend cannot edit"), exit 2. Black-box:
only `reflexion.cli.main` and the web app's public entry are used."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from reflexion.cli import main

FAST = ["--embedder", "hash-64", "--no-progress"]
LESSON = re.compile(r"^([0-9a-f]{16})\s")
BACKENDS = {"chroma": "reflexion", "window": "reflexion-window"}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The quadratic drill, once per backend: 8 tasks, 5 episodes, lessons on every failure."""
    runs = {}
    for backend, strategy in BACKENDS.items():
        out = tmp_path_factory.mktemp(backend) / "run"
        argv = ["run", "--env", "quadratic", "--strategy", strategy, "--episodes", "5"]
        assert main([*argv, "--out", str(out), *FAST]) == 0
        runs[backend] = out
    return runs


@pytest.fixture(params=sorted(BACKENDS))
def q(request: pytest.FixtureRequest, made: dict[str, Path], tmp_path: Path) -> Path:
    """A private copy of one backend's run, named `run` (the web page's /runs/run)."""
    return Path(shutil.copytree(made[request.param], tmp_path / "run"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def ok(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, err = cli(capsys, *argv)
    assert code == 0, f"{' '.join(argv)}: exit {code}: {err}"
    return out


def done(capsys: pytest.CaptureFixture[str], verb: str, *argv: str) -> str | None:
    """The verb's output, or None where the backend declined it in one line (exit 2)."""
    code, out, err = cli(capsys, "memory", verb, *argv)
    if code == 0:
        return out
    assert code == 2, f"memory {verb}: exit {code}: {err}"
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "cannot" in err and verb in err, err  # "the window backend cannot edit"
    return None


def listed(q: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """`memory list`'s lessons: id -> its line."""
    out = ok(capsys, "memory", "list", str(q))
    return {m[1]: line for line in out.splitlines() if (m := LESSON.match(line))}


def task_of(line: str) -> str:
    """The task id as `memory list` prints it (the form a user copies)."""
    return line.split()[1]


def test_list_show_search_and_export_agree(q: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lessons = listed(q, capsys)
    assert len(lessons) >= 8  # the drill leaves lessons on several tasks
    rid, line = next(iter(lessons.items()))
    shown = ok(capsys, "memory", "show", str(q), rid)
    assert rid in shown and line.split("| ")[-1].rstrip(".") in shown  # the text, unabridged
    found = ok(capsys, "memory", "search", str(q), "Following the gradient", "--k", "3")
    hits = [m[0] for m in re.finditer(r"\b[0-9a-f]{16}\b", found)]
    assert 1 <= len(hits) <= 3 and set(hits) <= set(lessons)
    exported = ok(capsys, "memory", "export", str(q))
    rows = [json.loads(row) for row in exported.splitlines() if row.startswith("{")]
    assert sorted(r["id"] for r in rows) == sorted(lessons)


def test_forget_by_the_printed_task_then_revert_brings_it_back(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lessons = listed(q, capsys)
    task = task_of(next(iter(lessons.values())))
    of_task = sorted(r for r, line in lessons.items() if task_of(line) == task)
    dry = done(capsys, "forget", str(q), "--task", task, "--dry-run")
    if dry is None:  # a backend that cannot forget says so for a dry run too
        assert done(capsys, "forget", str(q), of_task[0]) is None
        assert listed(q, capsys) == lessons
        return
    assert f"would forget {len(of_task)} reflection" in dry
    assert listed(q, capsys) == lessons  # a dry run changes nothing
    forgot = done(capsys, "forget", str(q), of_task[0], "--why", "misleading")
    assert forgot is not None and re.search(r"\bforgot 1 reflection\b(?!s)", forgot), forgot
    assert of_task[0] not in listed(q, capsys)
    history = done(capsys, "history", str(q), of_task[0])
    assert history is not None and "forget" in history and "misleading" in history
    assert done(capsys, "revert", str(q), of_task[0]) is not None
    assert set(listed(q, capsys)) == set(lessons)


def test_edit_changes_the_text_and_revert_restores_it(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lessons = listed(q, capsys)
    rid = next(iter(lessons))
    before = ok(capsys, "memory", "show", str(q), rid)
    new = "Always check the sign of the gradient step first."
    if done(capsys, "edit", str(q), rid, "--text", new, "--why", "clearer") is None:
        assert ok(capsys, "memory", "show", str(q), rid) == before
        return
    assert new in ok(capsys, "memory", "show", str(q), rid)
    history = done(capsys, "history", str(q), rid)
    assert history is not None and "edit (clearer)" in history and new in history
    assert done(capsys, "revert", str(q), rid) is not None
    assert new not in ok(capsys, "memory", "show", str(q), rid)
    assert set(listed(q, capsys)) == set(lessons)


def test_why_takes_the_printed_task_id_and_names_only_listed_lessons(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lessons = listed(q, capsys)
    task = next(task_of(line) for line in lessons.values() if task_of(line).endswith("q2"))
    out = ok(capsys, "memory", "why", str(q), task, "2")
    assert "seed 0" in out.splitlines()[0] and "episode 2" in out.splitlines()[0]
    recalled = out.split("recalled:")[1].split("cut off")[0].split("then:")[0]
    named = re.findall(r"\b[0-9a-f]{16}\b", out)
    assert re.findall(r"\b[0-9a-f]{16}\b", recalled) and set(named) <= set(lessons)
    assert "then: the attempt scored" in out


def test_audit_samples_and_prune_dry_run_changes_nothing(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lessons = listed(q, capsys)
    audited = ok(capsys, "memory", "audit", str(q), "--sample", "2")
    assert re.search(r"audited 2 of \d+", audited), audited
    assert "no longer there" not in audited
    after_audit = listed(q, capsys)  # the audit may add its counts to the credit, no more
    assert set(after_audit) == set(lessons)
    pruned = done(capsys, "prune", str(q), "--harmful", "--dry-run")
    assert pruned is None or "would forget" in pruned
    assert listed(q, capsys) == after_audit


def test_the_web_memory_page_lists_and_shows_what_the_cli_does(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reflexion.web.app import make_app  # here: a broken web layer fails only its own tests
    from reflexion.web.site import Site

    lessons = listed(q, capsys)
    web = TestClient(
        make_app(Site.from_paths([q], False, token="t0k")), base_url="http://127.0.0.1"
    )
    page = web.get("/runs/run/memory")
    assert page.status_code == 200
    assert set(re.findall(r'href="/runs/run/memory/([0-9a-f]{16})"', page.text)) == set(lessons)
    rid, line = next(iter(lessons.items()))
    lesson = web.get(f"/runs/run/memory/{rid}")
    assert lesson.status_code == 200 and f"Lesson {rid}" in lesson.text
    assert line.split("| ")[-1].rstrip(".") in lesson.text
