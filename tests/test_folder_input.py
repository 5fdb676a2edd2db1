"""A run folder edited by hand, and settings a run does not use yet: each is refused in one line
that names the file (or the flag), with a non-zero exit and no file changed, never a traceback
(a review as a new user found these)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from running import RunConfig, run

from reflexion.cli import main
from reflexion.runner import execute

FAST = ["--embedder", "hash-64", "--no-progress"]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("made") / "q"
    argv = ["compare", "--env", "quadratic", "--strategies", "single,reflexion", "--tasks", "2"]
    assert main([*argv, "--episodes", "2", "--out", str(out), *FAST]) == 0
    return out


def damaged(made: Path, tmp_path: Path, name: str, edit: object) -> Path:
    """A copy of the made folder with one file changed: `edit` is the new text, or a function
    of the old lines."""
    folder = tmp_path / "copy"
    shutil.copytree(made, folder)
    path = folder / name
    text = edit if isinstance(edit, str) else "\n".join(edit(path.read_text().splitlines())) + "\n"
    path.write_text(text)
    return folder


def records(folder: Path) -> dict[str, bytes]:
    """The run's own files (the store's database changes as Chroma opens it; its lessons are
    compared by `memory list` where a command gets that far)."""
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def refused(argv: list[str], folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The one line the command printed as it refused; the run's files unchanged."""
    before = records(folder)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert records(folder) == before
    return err


def commands(folder: Path) -> list[list[str]]:
    resume = ["compare", "--env", "quadratic", "--strategies", "single,reflexion", "--tasks", "2"]
    return [
        [*resume, "--episodes", "2", "--out", str(folder), *FAST],
        ["report", str(folder)],
        ["memory", "list", str(folder)],
    ]


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ("[]", "it holds list, not an object of settings"),
        ('{"strategies": "reflexion"}', "'strategies' is 'reflexion', not a list of names"),
        ('{"strategies": ["single"], "episodes": "five"}', "'episodes' is 'five', not int"),
    ],
)
def test_a_config_of_the_wrong_shape_is_one_line(
    made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str, said: str
) -> None:
    folder = damaged(made, tmp_path, "config.json", config)
    for argv in commands(folder):
        err = refused(argv, folder, capsys)
        assert err.endswith(f"config.json is not a readable config: {said}"), (argv, err)


def test_a_config_without_its_strategies_is_not_resumed(
    made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = json.loads((made / "config.json").read_text())
    del saved["strategies"]
    folder = damaged(made, tmp_path, "config.json", json.dumps(saved))
    err = refused(commands(folder)[0], folder, capsys)
    assert err.endswith("config.json is not a readable config: it has no 'strategies'")


def changed_line(lines: list[str], **fields: object) -> list[str]:
    """The file's lines with its third record's `fields` changed (a real record otherwise)."""
    return [*lines[:2], json.dumps(json.loads(lines[2]) | fields), *lines[3:]]


@pytest.mark.parametrize(
    ("name", "edit", "said"),
    [
        ("results.jsonl", lambda lines: [*lines[:2], "[1]", *lines[3:]], "not a JSON object"),
        ("trace.jsonl", lambda lines: [*lines[:2], "null", *lines[3:]], "not a JSON object"),
        ("results.jsonl", lambda lines: [*lines[:2], "{}", *lines[3:]], "not a result of"),
        ("trace.jsonl", lambda lines: [*lines[:2], "5", *lines[3:]], "not a JSON object"),
        ("trace.jsonl", lambda lines: [*lines[:2], "{}", *lines[3:]], "not a trace step of"),
        ("results.jsonl", lambda lines: changed_line(lines, strategy=3), "not a result of"),
        ("results.jsonl", lambda lines: changed_line(lines, seed="0"), "not a result of"),
        ("trace.jsonl", lambda lines: changed_line(lines, task_id=["q0"]), "not a trace step"),
        ("trace.jsonl", lambda lines: changed_line(lines, seed=True), "not a trace step of"),
    ],
)
def test_a_line_that_holds_no_record_is_one_line_with_its_number(
    made: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    edit: object,
    said: str,
) -> None:
    """A line that is JSON but no record, or a record whose keys (strategy, task, seed) are of
    the wrong type: before, a traceback, a trial run twice, or a resume that went on."""
    folder = damaged(made, tmp_path, name, edit)
    why = [["memory", "why", str(folder), "q0", "2"]] if name == "trace.jsonl" else []
    for argv in [*commands(folder)[:2], *why]:  # `why` reads the trace only
        err = refused(argv, folder, capsys)
        assert f"{name}: line 3 is {said}" in err and err.endswith("the file is damaged"), err


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        (["--embedder", "nosuch"], "unknown --embedder 'nosuch'"),
        (["--memory-backend", "nosuch"], "unknown memory backend 'nosuch'"),
        (["--chroma-url", "notaurl"], "bad Chroma server url 'notaurl'"),
        (["--ray-address", "x"], "--ray-address names the cluster of --executor ray"),
    ],
)
def test_a_memory_setting_is_checked_even_when_no_strategy_keeps_lessons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: list[str], said: str
) -> None:
    """Before, `single` ran and recorded the bad value, and the folder then refused every
    strategy with memory that a user added to it."""
    out = tmp_path / "s"
    argv = ["compare", "--env", "quadratic", "--strategies", "single", "--out", str(out)]
    assert main([*argv, "--no-progress", *flag]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err, err
    assert not (out / "config.json").exists()


def test_dedup_where_the_store_cannot_merge_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compare", "--env", "quadratic", "--strategies", "reflexion-window,reflexion"]
    argv += ["--tasks", "1", "--episodes", "2", "--dedup", "0.95", "--out", str(tmp_path / "d")]
    assert main([*argv, *FAST]) == 0
    err = capsys.readouterr().err
    note = "note: --dedup merges only in a store that can (chroma), not in the store of "
    assert note + "reflexion-window\n" in err


def test_the_time_budget_starts_after_the_one_time_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load longer than --timeout (a model's, on a slow machine) used to spend the budget
    before the first trial, every session: "run the same command to resume" never ended."""
    slow = execute.prepare

    def prepare(*args: object, **kwargs: object) -> execute.Prepared:
        plan = slow(*args, **kwargs)  # type: ignore[arg-type]
        time.sleep(2.0)  # a load of 2 s
        return plan

    monkeypatch.setattr(execute, "prepare", prepare)
    cfg = RunConfig(env="quadratic", strategies=("single",), tasks=2, out=str(tmp_path / "t"))
    results = run(RunConfig(**(cfg.to_dict() | {"timeout_s": 1.5})))
    assert results.stopped is None and len(results) == 2


def test_the_memory_commands_name_what_is_wrong(
    made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing folder, a strategy with no recalls, a forgotten lesson, an empty search or
    import: each said as it is, not as a near miss elsewhere."""
    err = refused(["report", str(tmp_path / "missing")], tmp_path, capsys)
    assert err.endswith(f"{tmp_path / 'missing'} does not exist")
    err = refused(["memory", "why", str(made), "q0", "2", "--strategy", "nosuch"], made, capsys)
    assert err.endswith(f"no recall by strategy 'nosuch' in {made}; by: reflexion")
    err = refused(["memory", "search", str(made), " "], made, capsys)
    assert err.endswith("memory search needs some text to search for")
    folder = damaged(made, tmp_path, "results.jsonl", lambda lines: lines)
    capsys.readouterr()
    assert main(["memory", "list", str(folder)]) == 0
    rid = capsys.readouterr().out.splitlines()[1].split()[0]
    assert main(["memory", "forget", str(folder), rid, "--why", "a test"]) == 0
    err = refused(["memory", "show", str(folder), rid[:8]], folder, capsys)
    assert err.endswith(
        f"lesson {rid} was forgotten from {folder}: `reflexion memory history` shows what it was,"
        " and `reflexion memory revert` brings it back"
    )
    lesson = {"id": "x1", "text": "Check the sign.", "run_id": "r", "strategy": "reflexion"}
    lesson |= {"env": "e", "task_id": "t", "seed": 0, "episode": 1, "score": 0.0, "created": 1.0}
    for field in ("text", "id"):
        (tmp_path / "in.jsonl").write_text(json.dumps(lesson | {field: " "}) + "\n")
        argv = ["memory", "import", str(folder), str(tmp_path / "in.jsonl")]
        err = refused(argv, folder, capsys)
        assert err.endswith(f"{tmp_path / 'in.jsonl'}:1: field {field!r} is empty")


def test_an_export_of_two_stores_imports_and_exports_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder with a Chroma store and a window file exports oldest first across both, so the
    file imported into one store exports again as it was."""
    out = tmp_path / "mixed"
    argv = ["compare", "--env", "quadratic", "--strategies", "reflexion-window,reflexion"]
    assert main([*argv, "--tasks", "2", "--episodes", "3", "--out", str(out), *FAST]) == 0
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert main(["memory", "export", str(out), "--output", str(first)]) == 0
    store = tmp_path / "store"
    assert main(["memory", "import", str(store), str(first), "--embedder", "hash-64"]) == 0
    assert main(["memory", "export", str(store), "--output", str(second)]) == 0
    strategies = {json.loads(line)["strategy"] for line in first.read_text().splitlines()}
    assert strategies == {"reflexion", "reflexion-window"}
    assert second.read_bytes() == first.read_bytes()


def test_a_backend_name_is_checked_unless_a_memory_object_stands_in(tmp_path: Path) -> None:
    """`single` alone with an unknown backend is refused (the folder would record it); a memory
    passed from Python replaces the name, as before."""
    from memory import WindowMemory
    from reflexion import UsageError

    cfg = RunConfig(env="quadratic", strategies=("single",), tasks=1, memory_backend="mine")
    with pytest.raises(UsageError, match="unknown memory backend 'mine'"):
        run(RunConfig(**(cfg.to_dict() | {"out": str(tmp_path / "a")})))
    cfg = RunConfig(**(cfg.to_dict() | {"strategies": ("reflexion",), "out": str(tmp_path / "b")}))
    assert len(run(cfg, memory=WindowMemory())) == 1
