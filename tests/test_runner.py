"""The run folder: resume without duplicates, torn lines, and settings that must not change."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from running import RunConfig, run

from envs.quadratic.env import QuadraticEnv
from reflexion.core.errors import UsageError
from reflexion.core.jsonl import read_jsonl
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
