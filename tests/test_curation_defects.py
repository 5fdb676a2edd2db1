"""Issue 21's curation defects 1-6 and 8, each as the user meets it: the `reflexion memory`
commands and the web memory page on a real quadratic run that holds a Chroma store (`reflexion`)
and a window (`reflexion-window`). Black-box: only `reflexion.cli.main`, the public run API and
the web app's public entry are used, so the curation code can move under these tests."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import scripted
from starlette.testclient import TestClient

from reflexion import RunConfig, run
from reflexion.cli import main

FAST = ["--embedder", "hash-64", "--no-progress"]
LESSON = re.compile(r"^([0-9a-f]{16})\s")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("curation") / "q"
    argv = ["compare", "--env", "quadratic", "--episodes", "5"]
    argv += ["--strategies", "reflexion,reflexion-window", "--out", str(out), *FAST]
    assert main(argv) == 0
    return out


@pytest.fixture
def q(made: Path, tmp_path: Path) -> Path:
    """A private copy of the run: a test may change its stores."""
    return Path(shutil.copytree(made, tmp_path / "q"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def listed(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """`memory list`'s lessons: id -> its line."""
    code, out, _ = cli(capsys, "memory", "list", str(run_dir))
    assert code == 0
    return {m[1]: line for line in out.splitlines() if (m := LESSON.match(line))}


def of_strategy(lines: dict[str, str], strategy: str) -> list[str]:
    return [rid for rid, line in lines.items() if f"  {strategy} seed " in line]


def one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def declined(code: int, err: str, verb: str) -> bool:
    """True where the backend said in one line that it cannot do `verb` (exit 2)."""
    if code == 0:
        return False
    line = one_line_error(code, err)
    assert "no reflection with id" not in line, line  # the lesson exists: say what cannot be done
    assert "cannot" in line and verb in line, line
    return True


# defect 1 ------------------------------------------------------------------------------------


def test_1_audit_samples_window_lessons_instead_of_skipping_them(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "memory", "audit", str(q), "--sample", "8")
    assert code == 0, err
    assert "no longer there" not in out + err  # window lessons are in window.jsonl
    assert re.search(r"audited 8 of \d+", out), out


# defect 2 ------------------------------------------------------------------------------------


def credit_of(line: str) -> int:
    """How many recalls a credit text counts: "never recalled" is 0."""
    if "never recalled" in line:
        return 0
    found = re.search(r"recalled (\d+)", line)
    assert found, line
    return int(found[1])


def test_2_an_edit_starts_the_lessons_credit_afresh(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(q, capsys)
    rid = next(r for r in of_strategy(lines, "reflexion") if credit_of(lines[r]) > 0)
    code, _, err = cli(capsys, "memory", "edit", str(q), rid, "--text", "Try x = [0, 0].")
    assert code == 0, err
    after = listed(q, capsys)[rid]
    assert "Try x = [0, 0]." in after
    assert credit_of(after) == 0, after  # the README: "an edit starts the counts afresh"
    _, shown, _ = cli(capsys, "memory", "show", str(q), rid)
    credit = [line for line in shown.splitlines() if line.startswith("credit:")]
    assert all(credit_of(line) == 0 for line in credit), credit


def test_2_after_forget_and_revert_the_credit_agrees_with_the_recalls_shown(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(q, capsys)
    rid = next(r for r in of_strategy(lines, "reflexion") if credit_of(lines[r]) > 0)
    assert cli(capsys, "memory", "forget", str(q), rid, "--why", "test")[0] == 0
    assert cli(capsys, "memory", "revert", str(q), rid)[0] == 0
    _, shown, _ = cli(capsys, "memory", "show", str(q), rid)
    recalls = sum(line.startswith("recalled by ") for line in shown.splitlines())
    credit = [line for line in shown.splitlines() if line.startswith("credit:")]
    assert credit and credit_of(credit[0]) == recalls, shown
    assert credit_of(listed(q, capsys)[rid]) == recalls, listed(q, capsys)[rid]


# defect 3 ------------------------------------------------------------------------------------


def test_3_why_for_a_window_recall_ranks_nothing_from_the_chroma_store(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(q, capsys)
    chroma, window = of_strategy(lines, "reflexion"), of_strategy(lines, "reflexion-window")
    code, out, err = cli(
        capsys, "memory", "why", str(q), "q2", "2", "--strategy", "reflexion-window"
    )
    assert code == 0, err
    assert any(rid in out for rid in window), out  # what the window recalled is still shown
    leaked = [rid for rid in chroma if rid in out]
    assert not leaked, f"Chroma lessons listed for a window recall: {leaked}\n{out}"
    assert not re.search(r"similarity \d", out), out  # the window does not rank by similarity


# defect 4 ------------------------------------------------------------------------------------


def test_4_the_printed_task_id_is_accepted_by_forget_and_why(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(q, capsys)
    printed = next(line.split()[1] for line in lines.values() if line.split()[1].endswith("q2"))
    assert printed == "quadratic/q2"  # what `memory list` shows, and so what a user types
    code, out, err = cli(capsys, "memory", "forget", str(q), "--task", printed, "--dry-run")
    assert code == 0, err
    would = re.search(r"would forget (\d+)", out)
    assert would and int(would[1]) > 0, out
    assert listed(q, capsys) == lines  # still a dry run
    code, out, err = cli(capsys, "memory", "why", str(q), printed, "2", "--strategy", "reflexion")
    assert code == 0, err
    assert "recalled" in out


@pytest.mark.parametrize(
    "verb", [["forget", "--task", "quadratic/q2x", "--dry-run"], ["why", "quadratic/q2x", "2"]]
)
def test_4_a_task_id_matching_nothing_names_the_closest(
    q: Path, capsys: pytest.CaptureFixture[str], verb: list[str]
) -> None:
    code, _, err = cli(capsys, "memory", verb[0], str(q), *verb[1:])
    line = one_line_error(code, err)
    # the typed id is echoed; what must be left once it is taken out is a suggestion
    assert "q2" in line.replace("quadratic/q2x", "").replace("q2x", ""), line


@pytest.fixture(scope="module")
def constrained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("constrained") / "c"
    model = scripted(["a dog", "I left out the concepts cat and run.", "a dog runs"] * 8)
    config = RunConfig(
        env="constrained:1",
        strategies=("reflexion",),
        episodes=2,
        out=str(out),
        embedder="hash-64",
        concurrency=1,
    )
    run(config, model=model)
    return out


def test_4_an_env_with_prefixed_task_ids_prints_the_prefix_once(
    constrained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = Path(shutil.copytree(constrained, tmp_path / "c"))
    lines = listed(c, capsys)
    assert lines
    printed = [line.split()[1] for line in lines.values()]
    doubled = [t for t in printed if re.match(r"([^/]+)/\1/", t)]
    assert not doubled, doubled  # e.g. constrained/constrained/0
    code, out, err = cli(capsys, "memory", "forget", str(c), "--task", printed[0], "--dry-run")
    assert code == 0, err
    would = re.search(r"would forget (\d+)", out)
    assert would and int(would[1]) > 0, out


# defect 5 ------------------------------------------------------------------------------------


def test_5_forgetting_an_id_that_is_not_there_is_an_error(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = listed(q, capsys)
    code, out, err = cli(capsys, "memory", "forget", str(q), "deadbeefdeadbeef")
    line = one_line_error(code, err)
    assert "deadbeefdeadbeef" in line
    assert "forgot" not in out
    assert listed(q, capsys) == before


# defect 6 ------------------------------------------------------------------------------------


def window_lesson(q: Path, capsys: pytest.CaptureFixture[str]) -> str:
    return of_strategy(listed(q, capsys), "reflexion-window")[0]


def test_6_a_window_lesson_can_be_shown(q: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rid = window_lesson(q, capsys)
    code, out, err = cli(capsys, "memory", "show", str(q), rid)
    assert code == 0 and rid in out and "reflexion-window" in out, err


def test_6_editing_a_window_lesson_works_or_says_the_window_cannot(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = window_lesson(q, capsys)
    code, _, err = cli(capsys, "memory", "edit", str(q), rid, "--text", "Try x = [1].")
    if not declined(code, err, "edit"):
        assert "Try x = [1]." in cli(capsys, "memory", "show", str(q), rid)[1]


def test_6_a_window_lessons_history_does_not_call_it_not_stored(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = window_lesson(q, capsys)
    code, out, err = cli(capsys, "memory", "history", str(q), rid)
    if not declined(code, err, "history"):
        assert "(not stored)" not in out, out  # it is stored, in window.jsonl


def test_6_forgetting_a_window_lesson_works_or_says_the_window_cannot(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = window_lesson(q, capsys)
    code, out, err = cli(capsys, "memory", "forget", str(q), rid)
    if not declined(code, err, "forget"):
        assert "forgot 1 reflection" in out, out
        assert rid not in listed(q, capsys)


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


# defect 8 ------------------------------------------------------------------------------------


def test_8_show_prints_created_as_a_date_and_time(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for rid in (of_strategy(listed(q, capsys), s)[0] for s in ("reflexion", "reflexion-window")):
        _, out, _ = cli(capsys, "memory", "show", str(q), rid)
        created = next(line for line in out.splitlines() if line.startswith("created:"))
        assert re.match(r"created: \d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}", created), created


def test_8_forgetting_one_says_reflection_in_the_singular(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = of_strategy(listed(q, capsys), "reflexion")[0]
    code, out, err = cli(capsys, "memory", "forget", str(q), rid)
    assert code == 0, err
    assert re.search(r"\bforgot 1 reflection\b(?!s)", out), out


def test_8_history_does_not_print_revert_twice(q: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rid = of_strategy(listed(q, capsys), "reflexion")[0]
    assert cli(capsys, "memory", "forget", str(q), rid, "--why", "test")[0] == 0
    assert cli(capsys, "memory", "revert", str(q), rid)[0] == 0
    _, out, _ = cli(capsys, "memory", "history", str(q), rid)
    assert "revert" in out and "revert (revert)" not in out, out


@pytest.mark.parametrize(
    ("field", "bad"), [("episode", "two"), ("text", None)], ids=["a word for a number", "missing"]
)
def test_8_a_bad_import_line_names_its_field_and_imports_nothing(
    q: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, bad: str | None
) -> None:
    exported = tmp_path / "all.jsonl"
    assert cli(capsys, "memory", "export", str(q), "--output", str(exported))[0] == 0
    good, wrong = (json.loads(line) for line in exported.read_text().splitlines()[:2])
    if bad is None:
        del wrong[field]
    else:
        wrong[field] = bad
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text(json.dumps(good) + "\n" + json.dumps(wrong) + "\n")
    store = tmp_path / "store"
    code, _, err = cli(capsys, "memory", "import", str(store), str(jsonl), "--embedder", "hash-64")
    line = one_line_error(code, err)
    assert f"{jsonl}:2" in line and field in line, line
    if store.exists():  # nothing half-imported: the good first line is not there either
        assert not listed(store, capsys)
