"""The run folder: resume without duplicates, torn lines, and settings that must not change."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from reflexion.errors import UsageError
from reflexion.runfolder import INTERRUPTED, RESULTS, TRACE, RunFolder, read_jsonl
from reflexion.runner import RunConfig, run

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
