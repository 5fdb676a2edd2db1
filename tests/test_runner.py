"""The run folder: resume without duplicates (and what a resume says it found), torn lines,
settings that must not change, config.json's version and model, and one-time loads timed apart
from the trials."""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from commands import FAST, said
from conftest import CountingModel, KeywordEnv, scripted
from langchain_core.messages import AIMessage
from running import RunConfig, run

import reflexion
from envs.quadratic.env import QuadraticEnv
from reflexion.cli import main
from reflexion.core.errors import UsageError
from reflexion.core.jsonl import read_jsonl
from reflexion.core.lesson_records import Curation, Order
from reflexion.core.runfolder import INTERRUPTED, RESULTS, TRACE, RunFolder

STRATEGIES = ("single", "self-refine", "reflexion-window")


def config(out: Path, **kw) -> RunConfig:
    base = {
        "env": "quadratic",
        "strategies": STRATEGIES,
        "out": str(out),
        "episodes": 4,
        "tasks": 3,
        "seeds": 2,
    }
    return RunConfig(**(base | kw))


def test_a_run_writes_config_trace_and_one_result_per_trial(tmp_path: Path) -> None:
    results = run(config(tmp_path / "r"))
    assert len(results) == 3 * 3 * 2
    folder = RunFolder(tmp_path / "r")
    assert json.loads(folder.config_path.read_text())["strategies"] == list(STRATEGIES)
    kinds = Counter(s.kind for s in folder.steps())
    assert kinds["score"] == kinds["evaluate"] == sum(r.attempts for r in results)
    assert kinds["reflect"] == kinds["remember"] > 0


def test_rerunning_a_finished_folder_adds_nothing(tmp_path: Path) -> None:
    out = tmp_path / "r"
    first = run(config(out))
    before = (out / TRACE).read_bytes(), (out / RESULTS).read_bytes()
    again = run(config(out))
    assert ((out / TRACE).read_bytes(), (out / RESULTS).read_bytes()) == before
    assert [r.to_dict() for r in again] == [r.to_dict() for r in first]


def test_resume_after_a_crash_finishes_without_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run(config(out))
    lines = (out / RESULTS).read_bytes().splitlines(keepends=True)
    # Simulate a kill: the last 4 results never landed, and the 5th-last is half written.
    (out / RESULTS).write_bytes(b"".join(lines[:-5]) + lines[-5][:20])
    with (out / TRACE).open("ab") as f:
        f.write(b'{"id": "torn')
    results = run(config(out))
    assert len(results) == 18 and len({r.key for r in results}) == 18
    ids = [s.id for s in RunFolder(out).steps()]
    assert len(ids) == len(set(ids))  # every step of a finished trial exactly once
    finished = {(s.strategy, s.task_id, s.seed) for s in RunFolder(out).steps()}
    assert finished == {r.key for r in results}
    assert len(read_jsonl(out / INTERRUPTED)) > 0  # the cut-off trials' steps were kept aside


def test_resume_refuses_other_settings_and_leaves_files_alone(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run(config(out))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(UsageError, match="episodes=4"):
        run(config(out, episodes=5))
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_a_damaged_line_in_the_middle_is_reported_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\nnot json\n{"a": 2}\n')
    with pytest.raises(UsageError, match="line 2"):
        read_jsonl(path)


def test_new_strategies_can_join_an_existing_folder(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run(config(out, strategies=("single",)))
    results = run(config(out, strategies=("single", "correct")))
    assert Counter(r.strategy for r in results) == {"single": 6, "correct": 6}
    assert json.loads((out / "config.json").read_text())["strategies"] == ["single", "correct"]


def test_resume_with_chroma_memory_keeps_each_reflection_once(tmp_path: Path) -> None:
    from memory.chroma.store import ChromaMemory

    out = tmp_path / "r"
    cfg = config(out, strategies=("reflexion",), embedder="hash-64", seeds=1)
    run(cfg)
    lines = (out / RESULTS).read_bytes().splitlines(keepends=True)
    (out / RESULTS).write_bytes(b"".join(lines[:-2]))  # the last two trials "never finished"
    results = run(cfg)
    assert len(results) == 3
    remembered = [s.data["id"] for s in RunFolder(out).steps() if s.kind == "remember"]
    stored = [r.id for r in ChromaMemory.open(out / "memory").reflections()]
    assert sorted(stored) == sorted(remembered) and len(set(stored)) == len(stored)


def test_window_reflections_persist_for_resume_and_inspection(tmp_path: Path) -> None:
    from memory.window import WindowMemory

    out = tmp_path / "r"
    run(config(out, strategies=("reflexion-window",), seeds=1))
    remembered = [s.data["id"] for s in RunFolder(out).steps() if s.kind == "remember"]
    stored = WindowMemory(out / "window.jsonl").reflections()
    assert sorted(r.id for r in stored) == sorted(remembered) and remembered


class FlakyEnv(QuadraticEnv):
    def score(self, task, candidate):
        if task.id == "q1":
            msg = "scorer crashed"
            raise ValueError(msg)
        return super().score(task, candidate)


def test_an_env_that_raises_fails_the_attempt_not_the_run(tmp_path: Path) -> None:
    results = run(config(tmp_path / "r", strategies=("self-refine",), seeds=1), env=FlakyEnv())
    by_task = {r.task_id: r for r in results}
    assert len(results) == 3 and not by_task["q1"].final_passed
    assert "ValueError: scorer crashed" in by_task["q1"].errors[0]
    assert by_task["q0"].errors == () and by_task["q0"].final_passed


def test_a_model_object_is_recorded_and_checked_on_resume(tmp_path: Path) -> None:
    from conftest import KeywordEnv, scripted

    out = tmp_path / "r"
    cfg = RunConfig(env="keywords", strategies=("single",), out=str(out), tasks=1)
    run(cfg, model=scripted(["apple river"]), env=KeywordEnv())
    assert json.loads((out / "config.json").read_text())["model"].startswith("object:CountingModel")
    with pytest.raises(UsageError, match="model"):
        run(cfg, env=KeywordEnv())  # no model now: refused, not silently mixed


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("seeds", 10**20, "between 1 and 1000"),
        ("episodes", 101, "between 1 and 100"),
        ("tasks", 9, "more than the 8 tasks"),
    ],
)
def test_out_of_range_settings_are_refused_before_anything_is_written(
    tmp_path: Path, field: str, value: int, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        run(config(tmp_path / "r", **{field: value, "tasks": None} | {field: value}))
    assert not (tmp_path / "r").exists()


def test_a_bug_in_one_trial_of_a_stream_stops_its_siblings(tmp_path: Path) -> None:
    import asyncio
    import time

    from reflexion.strategies import Strategy

    async def boom(trial) -> None:  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug in a strategy")

    async def slow(trial) -> None:  # type: ignore[no-untyped-def]
        await asyncio.sleep(300)

    config = RunConfig(
        env="quadratic",
        strategies=("boom", "slow"),
        out=str(tmp_path / "s"),
        tasks=1,
        order="stream",
    )
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="a bug in a strategy"):
        run(config, strategies=[Strategy("boom", boom), Strategy("slow", slow)])
    assert time.monotonic() - start < 120  # the slow sibling was cancelled, not awaited


def test_a_resume_with_fewer_strategies_reports_the_whole_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "q"
    argv = ["compare", "--env", "quadratic", "--tasks", "2", "--out", str(out), *FAST]
    assert main([*argv, "--strategies", "single,reflexion"]) == 0
    capsys.readouterr()
    assert main([*argv, "--strategies", "single"]) == 0  # resumes: nothing to run
    printed, err = capsys.readouterr()
    assert f"{out} also holds trials of reflexion: the comparison and the report cover" in err
    rows = [line.split()[0] for line in printed.split("\n\n")[0].splitlines()[2:]]  # headline
    assert rows == ["single", "reflexion"]  # the table covers what the folder holds
    saved = json.loads((out / "comparison.json").read_text())
    assert [s["strategy"] for s in saved["strategies"]] == ["single", "reflexion"]
    assert "| reflexion |" in (out / "report.md").read_text()
    config = RunConfig(env="quadratic", strategies=("single",), out=str(out), tasks=2)
    config = dataclasses.replace(config, embedder="hash-64")  # as the folder was run
    results = run(config)  # from Python, the same
    assert [s.strategy for s in results.summaries] == ["single", "reflexion"] and len(results) == 4


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


def test_a_model_object_with_no_name_is_recorded_without_a_trailing_colon(tmp_path: Path) -> None:
    config = RunConfig(env="keywords", strategies=("single",), out=str(tmp_path / "a"), tasks=1)
    run(config, model=scripted(["apple river"]), env=KeywordEnv())
    assert json.loads((tmp_path / "a" / "config.json").read_text())["model"] == (
        "object:CountingModel"
    )
    run(config, model=scripted(["apple river"]), env=KeywordEnv())  # the same model: resumes


# what two runs of the same settings write differently: when, the run's id, and the seconds taken
VARYING = ('  "created": ', '  "run_id": ', '  "spent_s": ')


def test_config_json_holds_the_choices_as_plain_strings_however_they_were_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same settings from the command line, from Python as strings and from Python as the
    enums write the same config.json, byte for byte but for when, the id and the time taken;
    each choice as its plain string, so an older folder resumes."""
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion-window", "--episodes", "2"]
    argv += ["--tasks", "1", "--order", "stream", "--curation", "text", "--out", "run", *FAST]
    given = {
        "strings": {"order": "stream", "curation": "text"},
        "enums": {"order": Order.STREAM, "curation": Curation.TEXT},
    }
    written = {}
    for name in ("cli", *given):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        if name == "cli":
            said(argv, capsys)
        else:
            one = dict(strategies=("reflexion-window",), episodes=2, tasks=1, embedder="hash-64")
            run(RunConfig(env="quadratic", out="run", **one, **given[name]))
        text = Path("run/config.json").read_text(encoding="utf-8")
        written[name] = [line for line in text.splitlines() if not line.startswith(VARYING)]
    assert written["cli"] == written["strings"] == written["enums"]
    assert '  "order": "stream",' in written["cli"] and '  "curation": "text",' in written["cli"]
    resumed = RunConfig.from_dict(json.loads(Path("run/config.json").read_text()))
    assert (resumed.order, resumed.curation) == (Order.STREAM, Curation.TEXT)
    assert "run folder: run" in said(argv, capsys)  # the folder resumes: no setting refused
