"""`reflexion memory audit` reruns recalling episodes without a lesson and counts the measured
effect in the store; `memory prune --harmful` forgets what was measured to hurt. On the
quadratic drill (scripted actor: no model), with a real Chroma store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_memory_edit import FAST, ids, out_of

from memory.chroma.store import ChromaMemory
from reflexion.cli import main


@pytest.fixture
def drill(tmp_path: Path) -> Path:
    out = tmp_path / "drill"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "5"]
    assert main([*argv, "--episodes", "4", "--out", str(out), *FAST]) == 0
    return out


def test_audit_measures_lessons_and_counts_each_probe_once(
    drill: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = out_of(["memory", "audit", str(drill), "--sample", "8"], capsys)
    assert re.search(r"audited 8 of \d+ \(episode, lesson\) pairs", out)
    # the drill starts from the point the best recalled lesson proposes: without that lesson
    # the episode starts from a fresh guess, and scores lower
    effects = re.search(r"effects: helped (\d+), hurt (\d+), same (\d+)", out)
    assert effects is not None and int(effects[1]) > 0 and int(effects[2]) == 0
    assert "scored what the run recorded in 8 of 8" in out  # the reruns repeat the run
    assert "counted in the store: 8" in out
    with ChromaMemory.open(drill / "memory") as memory:
        audited = [c for c in memory.credits().values() if c.audit_helped + c.audit_same]
    assert audited
    listed = out_of(["memory", "list", str(drill)], capsys)
    assert "; audit of 1: helped 1" in listed
    again = out_of(["memory", "audit", str(drill), "--sample", "8"], capsys)
    assert "counted in the store: 0" in again  # the same probes: shown, not counted twice


def test_an_edited_lesson_is_skipped_with_the_reason(
    drill: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for rid in ids(drill, capsys):
        assert main(["memory", "edit", str(drill), rid, "--text", "Try x = [0]."]) == 0
    out = out_of(["memory", "audit", str(drill), "--sample", "3"], capsys)
    assert out.count("the recalled lessons were edited since the run") == 3
    assert "audited 0 of" in out


def test_prune_forgets_only_what_was_measured_to_hurt_after_a_dry_run(
    drill: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, good, *_ = ids(drill, capsys)
    assert main(["memory", "prune", str(drill), "--harmful"]) == 2  # nothing audited yet
    assert "run `reflexion memory audit RUN` first" in capsys.readouterr().err
    with ChromaMemory.open(drill / "memory") as memory:
        memory.count_audit(bad, "hurt", "reflexion/q0/0/2")
        memory.count_audit(bad, "hurt", "reflexion/q0/0/3")
        memory.count_audit(bad, "helped", "reflexion/q0/0/4")
        memory.count_audit(good, "helped", "reflexion/q1/0/2")
    dry = out_of(["memory", "prune", str(drill), "--harmful", "--dry-run"], capsys)
    assert "would forget 1 of 2 audited lessons" in dry and bad in dry and good not in dry
    assert bad in ids(drill, capsys)  # the dry run changed nothing
    done = out_of(["memory", "prune", str(drill), "--harmful"], capsys)
    assert "forgot 1 lesson\n" in done
    left = ids(drill, capsys)
    assert bad not in left and good in left
    history = out_of(["memory", "history", str(drill), bad], capsys)
    assert "forget (prune --harmful: the audit measured it to hurt)" in history


def test_audit_of_a_run_without_memory_or_recalls_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    single = tmp_path / "single"
    assert (
        main(["run", "--env", "quadratic", "--strategy", "single", "--out", str(single), *FAST])
        == 0
    )
    assert main(["memory", "audit", str(single)]) == 2
    assert "has no memory" in capsys.readouterr().err
    once = tmp_path / "once"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--episodes", "1"]
    assert main([*argv, "--out", str(once), *FAST]) == 0
    # one episode: no lesson was written before a recall, so no episode recalled one
    out = out_of(["memory", "audit", str(once)], capsys)
    assert out.strip() == f"no episode in {once} recalled a lesson: nothing to audit"


def test_two_runs_sharing_a_store_are_audited_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared"
    for name in ("a", "b"):
        argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "3"]
        argv += ["--memory", str(shared), "--out", str(tmp_path / name), *FAST]
        assert main(argv) == 0
    for name in ("a", "b"):
        out = out_of(["memory", "audit", str(tmp_path / name), "--sample", "50"], capsys)
        audited = re.search(r"audited (\d+) of", out)
        assert audited is not None and f"counted in the store: {audited[1]}" in out


def test_audit_finds_a_run_s_server_store_by_itself(
    chroma_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "served"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "2"]
    assert main([*argv, "--chroma-url", chroma_server, "--out", str(out), *FAST]) == 0
    said = out_of(["memory", "audit", str(out), "--sample", "2"], capsys)
    assert "audited 2 of" in said
    assert "would forget 0 of" in out_of(
        ["memory", "prune", str(out), "--harmful", "--dry-run"], capsys
    )
