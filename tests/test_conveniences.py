"""What a user of the package notices from Python and the shell: `dir(reflexion)` shows the
API, `run()` returns a result with the table, pairs, records and files, a resume says what it
did, config.json carries the package version, one-time loads are timed apart, and `memory`
commands take filters and unique id prefixes."""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CountingModel, KeywordEnv
from langchain_core.messages import AIMessage

import reflexion
from reflexion import RunConfig, run
from reflexion.cli import main
from reflexion.core.lesson_records import Reflection


def test_dir_shows_the_public_api_and_no_helpers() -> None:
    shown = dir(reflexion)
    assert {"run", "arun", "RunConfig", "make_env", "load_model", "__version__"} <= set(shown)
    assert not {"Any", "importlib", "annotations", "TYPE_CHECKING", "VERSION"} & set(shown)
    assert not [name for name in shown if name.startswith("_") and name != "__version__"]


def test_star_import_gives_the_api_and_nothing_private() -> None:
    code = "from reflexion import *; print(sorted(k for k in dir() if not k.startswith('__')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names = set(ast.literal_eval(out.stdout))
    assert names == set(reflexion.__all__)


# --- `memory` commands: filters on list, and ids shortened to a unique prefix


def lesson(rid: str, strategy: str, task: str, text: str = "Check the sign.") -> dict[str, Any]:
    return Reflection(rid, text, "run1", strategy, "quadratic", task, 0, 1, -2.0, 1e9).to_dict()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A Chroma store holding lessons with chosen ids: abc1 and abc2 share a prefix."""
    rows = [
        lesson("abc1aaaa", "reflexion", "q0"),
        lesson("abc2bbbb", "reflexion", "q1"),
        lesson("def3cccc", "reflexion", "q1", "Step half as far."),
        lesson("0ff4dddd", "reflexion-window", "q1"),
    ]
    export = tmp_path / "lessons.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "store"
    assert main(["memory", "import", str(path), str(export), "--embedder", "hash-64"]) == 0
    return path


def said(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> str:
    capsys.readouterr()
    assert main(argv) == code
    out, err = capsys.readouterr()
    return out if code == 0 else err


def test_memory_list_filters_by_task_strategy_and_limit(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["memory", "list", str(store)]
    out = said([*argv, "--task", "q1", "--strategy", "reflexion"], capsys)
    assert out.splitlines()[0].startswith("2 reflections in ")
    assert {line.split()[0] for line in out.splitlines()[1:]} == {"abc2bbbb", "def3cccc"}
    out = said([*argv, "--task", "quadratic/q1", "--limit", "1"], capsys)
    head, *rows = out.splitlines()
    assert head.startswith("3 reflections in ") and head.endswith("(the first 1: --limit 1)")
    assert len(rows) == 1
    err = said([*argv, "--strategy", "reflexon"], capsys, code=2)
    assert err.count("\n") == 1 and "no lessons of strategy 'reflexon'" in err
    assert "closest: reflexion" in err
    assert "no task 'q7'" in said([*argv, "--task", "q7"], capsys, code=2)


def test_a_unique_prefix_names_a_lesson_in_every_memory_command(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(store)
    assert said(["memory", "show", path, "def"], capsys).startswith("id: def3cccc\n")
    assert said(["memory", "edit", path, "def3", "--text", "Step less."], capsys) == (
        "edited def3cccc\n"
    )
    assert "def3cccc: 2 changes; now: Step less." in said(["memory", "history", path, "de"], capsys)
    assert said(["memory", "revert", path, "d"], capsys) == "reverted def3cccc: Step half as far.\n"
    assert said(["memory", "forget", path, "0f"], capsys) == "forgot 1 reflection\n"
    # forgotten, it is listed no more: its history is reached by its id, or a prefix of it
    assert "2 changes; now: (not stored)" in said(["memory", "history", path, "0ff4dddd"], capsys)
    assert "2 changes; now: (not stored)" in said(["memory", "history", path, "0f"], capsys)


def test_an_ambiguous_prefix_is_one_line_naming_the_matches_and_changes_nothing(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for verb in (["show"], ["forget"], ["edit", "--text", "x"], ["history"], ["revert"]):
        err = said(["memory", verb[0], str(store), "abc", *verb[1:]], capsys, code=2)
        assert err == (
            f"reflexion: error: id 'abc' is ambiguous in {store}: 2 lessons start with it "
            "(abc1aaaa, abc2bbbb)\n"
        )
    rows = said(["memory", "list", str(store)], capsys).splitlines()[1:]
    assert len(rows) == 4 and all("Check the sign." in r for r in rows if "abc" in r)


# --- config.json records the package version; a resume refuses what this version cannot honour

QUICK = ["run", "--env", "quadratic", "--strategy", "single", "--tasks", "2", "--no-progress"]


def rewrite_config(folder: Path, **changes: Any) -> None:
    path = folder / "config.json"
    saved = json.loads(path.read_text())
    saved.update(changes)
    saved = {k: v for k, v in saved.items() if v is not None}
    path.write_text(json.dumps(saved))


def test_config_json_records_the_version_and_a_newer_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main([*QUICK, "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["version"] == reflexion.__version__
    rewrite_config(out, version="99.0.0")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    err = said([*QUICK, "--out", str(out)], capsys, code=2)
    assert err == (
        f"reflexion: error: {out} was written by reflexion 99.0.0, newer than this one "
        f"({reflexion.__version__}): resume it with that version, or use another --out folder\n"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing written


def test_a_config_key_this_version_does_not_know_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main([*QUICK, "--out", str(out)]) == 0
    rewrite_config(out, warp_factor=9)
    err = said([*QUICK, "--out", str(out)], capsys, code=2)
    assert err.count("\n") == 1 and "'warp_factor'" in err
    assert f"reflexion {reflexion.__version__} does not know" in err
    rewrite_config(out, warp_factor=None, version=None)  # as a folder from before versions
    assert main([*QUICK, "--out", str(out)]) == 0  # resumes, and now says who wrote it last
    assert json.loads((out / "config.json").read_text())["version"] == reflexion.__version__


# --- run() from Python: the results are a list, and the comparison the CLI prints and writes


def test_run_returns_the_comparison_and_writes_what_compare_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "py"
    config = RunConfig(env="quadratic", strategies=("single", "retry"), tasks=3, out=str(out))
    results = run(config)
    assert isinstance(results, list) and len(results) == 6  # as before: a list of TaskResult
    assert [r.strategy for r in results[:1]] == ["single"] and all(r.task_id for r in results)
    assert [p.name for p in results.files] == [
        "comparison.json",
        "success_by_episode.png",
        "success_by_tokens.png",
        "report.md",
        "report.html",
    ]
    assert all(p.is_file() and p.parent == out for p in results.files)
    saved = json.loads((out / "comparison.json").read_text())
    assert [s["strategy"] for s in saved["strategies"]] == ["single", "retry"]
    [pair] = results.pairs
    assert (pair.a, pair.b, pair.tasks) == ("single", "retry", 3)
    # the table is the one `reflexion report` prints for the same folder
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert results.table.splitlines()[0].startswith("strategy")
    headline, rest = printed.split("\n", 1)  # the headline first, then the same table
    assert headline.startswith("no strategy differed") and rest.startswith(results.table + "\n")


def test_records_are_flat_dicts_one_per_trial(tmp_path: Path) -> None:
    config = RunConfig(env="quadratic", strategies=("retry",), tasks=2, out=str(tmp_path / "r"))
    results = run(config, report=False)
    assert results.files == [] and not (tmp_path / "r" / "comparison.json").exists()
    assert results.table.splitlines()[1].split()[:2] == ["retry", "2"]  # no files, same table
    rows = results.records()
    assert len(rows) == 2 and {r["task_id"] for r in rows} == {"q0", "q1"}
    assert all(isinstance(v, str | int | float | bool) for row in rows for v in row.values())
    first = results[0]
    assert rows[0]["final_passed"] == first.final_passed and rows[0]["errors"] == ""
    assert rows[0]["tokens"] == first.input_tokens + first.output_tokens
    assert json.loads(json.dumps(rows)) == rows


def test_arun_returns_the_same_kind_of_results(tmp_path: Path) -> None:
    config = RunConfig(env="quadratic", strategies=("single",), tasks=1, out=str(tmp_path / "a"))
    results = asyncio.run(reflexion.arun(config, report=False))
    assert len(results) == 1 and results.table.startswith("strategy")
    assert results.resume is not None and results.resume.message() is None  # a new run


# --- a resume says what it found; one-time loads are timed apart from the trials


def test_a_resume_says_how_many_trials_were_done_and_how_many_are_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "main"
    argv = ["compare", "--env", "quadratic", "--tasks", "2", "--no-progress", "--out", str(out)]
    assert main([*argv, "--strategies", "single"]) == 0
    assert "to run" not in capsys.readouterr().err  # a new run: nothing to say
    assert main([*argv, "--strategies", "single,retry"]) == 0
    assert f"2 done, 2 to run in {out}\n" in capsys.readouterr().err
    assert main([*argv, "--strategies", "single,retry"]) == 0
    captured = capsys.readouterr()
    assert f"4 of 4 trials already in {out}; nothing to run\n" in captured.err
    assert len((out / "results.jsonl").read_text().splitlines()) == 4  # none ran twice
    assert captured.out.splitlines()[1].startswith("strategy")  # the table, under the headline
    lines: list[str] = []
    config = RunConfig(env="quadratic", strategies=("retry",), tasks=2, out=str(out))
    results = run(config, echo=lines.append, report=False)
    assert lines == [
        f"2 of 2 trials already in {out}; nothing to run",
        f"{out} also holds trials of single: the comparison and the report cover them too",
    ]
    assert results.resume is not None and (results.resume.done, results.resume.total) == (2, 2)


class SlowToLoad(CountingModel):
    """A model whose weights take a moment to load (as the local GGUF model's do)."""

    def load(self) -> None:
        time.sleep(0.4)


def test_one_time_loads_are_a_line_of_their_own_not_a_trials_time(tmp_path: Path) -> None:
    replies = iter(AIMessage("apple river zebra") for _ in range(1))
    model = SlowToLoad(messages=replies, prompts=[])
    lines: list[str] = []
    out = tmp_path / "l"
    config = RunConfig(strategies=("reflexion",), tasks=1, embedder="hash-64", out=str(out))
    [result] = run(config, env=KeywordEnv(), model=model, echo=lines.append, report=False)
    assert result.final_passed and result.wall_s < 0.4  # the load is not in the trial's time
    model_load = next(v for k, v in result_loads(out).items() if k.startswith("model object:"))
    assert model_load >= 0.4
    assert "embedder hash-64 (chroma store)" in result_loads(out)
    [line] = lines
    assert line.startswith("loaded in ") and " s: model object:SlowToLoad" in line
    assert ", embedder hash-64 (chroma store) " in line


def result_loads(out: Path) -> dict[str, float]:
    loads: dict[str, float] = json.loads((out / "config.json").read_text())["loads"]
    return loads


LOADS: list[str] = []  # each load of a Counted model's weights


class Counted(CountingModel):
    """A model that counts the loads of its weights."""

    def load(self) -> None:
        LOADS.append("weights")


def test_a_finished_folder_run_again_loads_no_model_and_no_store(tmp_path: Path) -> None:
    out = tmp_path / "done"
    config = RunConfig(strategies=("reflexion",), tasks=1, embedder="hash-64", out=str(out))
    first = Counted(messages=iter([AIMessage("apple river zebra")]), prompts=[])
    [result] = run(config, env=KeywordEnv(), model=first, report=False)
    assert result.final_passed and LOADS == ["weights"]
    lines: list[str] = []
    again = Counted(messages=iter([]), prompts=[])
    results = run(config, env=KeywordEnv(), model=again, echo=lines.append, report=False)
    assert LOADS == ["weights"]  # not loaded again
    assert lines == [f"1 of 1 trials already in {out}; nothing to run"]  # no "loaded in" line
    assert results.loads == {} and [r.final_passed for r in results] == [True]
    assert "embedder hash-64 (chroma store)" in result_loads(out)  # the first session's, kept


def test_a_run_of_no_tasks_still_checks_its_model(tmp_path: Path) -> None:
    env = KeywordEnv()
    env._tasks = []  # a Python env object whose task list is empty
    config = RunConfig(strategies=("single",), model="no-such-model", out=str(tmp_path / "e"))
    with pytest.raises(reflexion.ReflexionError, match="no-such-model"):
        run(config, env=env, report=False)
